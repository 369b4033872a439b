# The PyTorch side of `npm run bench:torch` (bench/torch/run.js drives it; it installs nothing).
#   python3 torch_bench.py serve THREADS   one JSON request per stdin line, one JSON answer per stdout line:
#     {"op": "config", "bf16": b}                    version, threads, BLAS build, allocator, OPENBLAS_* settings;
#                                                    with b, what runs a bf16 product (bf16_kernels)
#     {"op": "setup", "workload": W, "dir": D, "bf16": b}   loads W's inputs from D, writes its outputs to D/torch,
#                                                    warms up; with b, W's bf16 form, and its float32 outputs to D/torch-f32
#     {"op": "time", "workload": W, "repeats": n}    median milliseconds of n calls
#   python3 torch_bench.py peak THREADS DIR        peak extra MB of the unfused LM head, forward then forward + backward
#   python3 torch_bench.py bf16-products THREADS   (ONEDNN_VERBOSE=1) a bf16 linear's forward and backward
import json
import os
import subprocess
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from llama import dense  # noqa: E402
from workloads import WORKLOADS, lm_head_forward, lm_head_forward_backward  # noqa: E402


def loaded_libraries():
    """The BLAS, LAPACK, OpenMP and allocator libraries this process has mapped (after a matrix product)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open('/proc/self/maps') as f:
        paths = {line.split()[-1] for line in f if '.so' in line}
    return sorted(os.path.realpath(p) for p in paths if any(k in p for k in ('blas', 'lapack', 'gomp', 'tcmalloc', 'mkl')))


def config(bf16):
    show = torch.__config__.show()
    build = [item.strip()[item.find('BLAS_INFO') - 1:].strip() for item in show.split(',') if 'BLAS_INFO=' in item]
    answer = {
        'version': torch.__version__, 'threads': torch.get_num_threads(), 'blas': build + loaded_libraries(),
        'tcmalloc': 'tcmalloc' in os.environ.get('LD_PRELOAD', ''),
        'env': {k: v for k, v in os.environ.items() if k.startswith(('OPENBLAS_', 'OMP_')) or k == 'LD_PRELOAD'},
    }
    if bf16:
        answer['bf16_kernels'] = bf16_kernels()
    return answer


def bf16_kernels():
    """What PyTorch reports for bf16 products: CPU capability, AMX and oneDNN bf16 support, and the oneDNN matmul
    implementations a bf16 linear's forward and backward ran (ONEDNN_VERBOSE=1 in a separate process, so the timed
    process runs without verbose output)."""
    env = {**os.environ, 'ONEDNN_VERBOSE': '1'}
    probe = subprocess.run([sys.executable, __file__, 'bf16-products', str(torch.get_num_threads())],
                           capture_output=True, text=True, env=env, check=True)
    matmuls = sorted({fields[fields.index('matmul') + 1] for fields in (line.split(',') for line in probe.stdout.splitlines())
                      if 'exec' in fields and 'matmul' in fields})
    return {
        'capability': torch.backends.cpu.get_cpu_capability(), 'amx_tile': torch.cpu._is_amx_tile_supported(),
        'mkldnn_bf16': torch.ops.mkldnn._is_mkldnn_bf16_supported(), 'onednn_matmul': matmuls,
    }


def bf16_products():
    """One bf16-autocast product h @ w.t() and its backward (d h, d w) at the LM head's width."""
    hidden = torch.randn(512, 512, requires_grad=True)
    weight = torch.randn(2048, 512, requires_grad=True)
    with dense(True):
        logits = hidden @ weight.t()
    logits.float().sum().backward()


def median_ms(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[repeats // 2]


def write_outputs(outputs, out):
    os.makedirs(out, exist_ok=True)
    outputs(out)


def serve():
    calls = {}
    for line in sys.stdin:
        request = json.loads(line)
        op = request['op']
        if op == 'config':
            answer = config(request.get('bf16', False))
        elif op == 'setup':
            calls.clear()  # one workload at a time: the previous one's model and tensors are freed
            workload, dir, bf16 = WORKLOADS[request['workload']], request['dir'], request.get('bf16', False)
            if bf16:  # the float32 outputs beside the bf16 ones: the driver prints each side's bf16 spread
                write_outputs(workload(dir)[1], os.path.join(dir, 'torch-f32'))
            call, outputs = workload(dir, bf16=True) if bf16 else workload(dir)
            write_outputs(outputs, os.path.join(dir, 'torch'))
            call()  # warm-up, as the driver's before its rounds
            calls[request['workload']] = call
            answer = {'ok': True}
        elif op == 'time':
            answer = {'ms': median_ms(calls[request['workload']], request['repeats'])}
        else:
            answer = {'error': f'unknown op {op}'}
        print(json.dumps(answer), flush=True)


def status_mb(field):
    with open('/proc/self/status') as f:
        line = next(line for line in f if line.startswith(field))
    return int(line.split()[1]) / 1024


def peak(dir):
    """As bench/fused-memory.js: VmHWM after the call minus VmRSS before it, in a fresh process."""
    forward, _ = lm_head_forward(dir)
    forward_backward, _ = lm_head_forward_backward(dir)
    before = status_mb('VmRSS')
    forward()
    forward_peak = status_mb('VmHWM') - before
    forward_backward()
    backward_peak = status_mb('VmHWM') - before  # also the kept-logits row's: PyTorch has one form
    print(json.dumps({'forwardPeakExtraMb': forward_peak, 'backwardPeakExtraMb': backward_peak, 'keptPeakExtraMb': backward_peak}))


if __name__ == '__main__':
    torch.set_num_threads(int(sys.argv[2]))
    if sys.argv[1] == 'serve':
        serve()
    elif sys.argv[1] == 'bf16-products':
        bf16_products()
    else:
        peak(sys.argv[3])
