// GGUF export for llama.cpp (and a reader for checking what was written).
export { exportGguf, ggufMetadata, writeModelGguf, GGUF_DTYPES, type GgufDtype, type GgufExportOptions, type GgufExportResult, type GgufModel } from './gguf-export.js';
export { writeGguf, type GgufContents, type GgufTensor, type GgufTensorType, type GgufValue, type GgufScalar, type GgufScalarType } from './gguf-file.js';
export { readGgufHeader, readGgufTensor, type GgufHeader, type GgufTensorInfo } from './gguf-read.js';
export { ggufArchitecture, ggufTensorName, type GgufArchitecture } from './gguf-model.js';
