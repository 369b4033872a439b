# Build-from-source fallback (node-gyp-build runs node-gyp when no prebuild matches).
# CMakeLists.txt is the canonical build; both read native/sources.json.
{
  "targets": [
    {
      "target_name": "grpo_native",
      "sources": [
        "<!@(node -p \"const s = require('./native/sources.json'); s.core.concat(s.addon).join(' ')\")"
      ],
      "include_dirs": [
        "<!(node -p \"require('node-addon-api').include_dir\")",
        "native/include",
        "native/kernels",
        "native/addon"
      ],
      "dependencies": [
        "<!(node -p \"require('node-addon-api').targets\"):node_addon_api_except_all"
      ],
      "defines": ["NAPI_VERSION=8", "NODE_API_NO_EXTERNAL_BUFFERS_ALLOWED"],
      "cflags_cc!": ["-fno-exceptions", "-std=gnu++17", "-std=gnu++20"],
      "cflags_cc": ["-std=c++17", "-O3", "-fexceptions", "-fno-math-errno", "-fvisibility=hidden", "-Wno-unused-parameter"],
      "ldflags": ["-Wl,--exclude-libs,ALL"],
      "xcode_settings": {
        "GCC_ENABLE_CPP_EXCEPTIONS": "YES",
        "CLANG_CXX_LANGUAGE_STANDARD": "c++17",
        "OTHER_CPLUSPLUS_FLAGS": ["-O3"]
      }
    }
  ]
}
