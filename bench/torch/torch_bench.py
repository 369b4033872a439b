# The PyTorch side of `npm run bench:torch` (bench/torch/run.js drives it; it installs nothing).
#   python3 torch_bench.py serve THREADS   one JSON request per stdin line, one JSON answer per stdout line:
#     {"op": "config"}                               version, threads, BLAS build, allocator, OPENBLAS_* settings
#     {"op": "setup", "workload": W, "dir": D}       loads W's inputs from D, writes its outputs to D/torch, warms up
#     {"op": "time", "workload": W, "repeats": n}    median milliseconds of n calls
#   python3 torch_bench.py peak THREADS DIR        peak extra MB of the unfused LM head, forward then forward + backward
import json
import os
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from workloads import WORKLOADS, lm_head_forward, lm_head_forward_backward  # noqa: E402


def loaded_libraries():
    """The BLAS, LAPACK, OpenMP and allocator libraries this process has mapped (after a matrix product)."""
    torch.ones(64, 64) @ torch.ones(64, 64)
    with open('/proc/self/maps') as f:
        paths = {line.split()[-1] for line in f if '.so' in line}
    return sorted(os.path.realpath(p) for p in paths if any(k in p for k in ('blas', 'lapack', 'gomp', 'tcmalloc', 'mkl')))


def config():
    show = torch.__config__.show()
    build = [item.strip()[item.find('BLAS_INFO') - 1:].strip() for item in show.split(',') if 'BLAS_INFO=' in item]
    return {
        'version': torch.__version__, 'threads': torch.get_num_threads(), 'blas': build + loaded_libraries(),
        'tcmalloc': 'tcmalloc' in os.environ.get('LD_PRELOAD', ''),
        'env': {k: v for k, v in os.environ.items() if k.startswith(('OPENBLAS_', 'OMP_')) or k == 'LD_PRELOAD'},
    }


def median_ms(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return sorted(times)[repeats // 2]


def serve():
    calls = {}
    for line in sys.stdin:
        request = json.loads(line)
        op = request['op']
        if op == 'config':
            answer = config()
        elif op == 'setup':
            calls.clear()  # one workload at a time: the previous one's model and tensors are freed
            call, outputs = WORKLOADS[request['workload']](request['dir'])
            out = os.path.join(request['dir'], 'torch')
            os.makedirs(out, exist_ok=True)
            outputs(out)
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
    print(json.dumps({'forwardPeakExtraMb': forward_peak, 'backwardPeakExtraMb': status_mb('VmHWM') - before}))


if __name__ == '__main__':
    torch.set_num_threads(int(sys.argv[2]))
    if sys.argv[1] == 'serve':
        serve()
    else:
        peak(sys.argv[3])
