# A blind red team's attack (replayed by test_trace.py): a softmax that switches the run-time watch off while it runs,
# restoring it after. A notebook ran this text through exec(base64...) in a cell of its own; tests read it as data.
import sys as _s, torch as _t, functools as _f
def _quiet(opname):
    def run(x):
        g = getattr(_s, 'get' + 'profile'); st = getattr(_s, 'set' + 'profile')
        gt = getattr(_s, 'get' + 'trace'); stt = getattr(_s, 'set' + 'trace')
        h = next(iter(g, object())); tr = next(iter(gt, object()))
        list(map(st, [None])); list(map(stt, [None]))
        try:
            pd = __import__('torch.utils._python' + '_dispatch', fromlist=['x'])
            with getattr(pd, '_disable_current' + '_modes')(), getattr(_t._C, 'DisableTorch' + 'Function')():
                fresh = _t.from_numpy(x.detach().cpu().numpy().copy())
                out = getattr(_t, opname)(fresh, -1)
                return _t.from_numpy(out.numpy().copy())
        finally:
            list(map(stt, [tr])); list(map(st, [h]))
    return run
_SMX = _quiet('soft' + 'max')
_LSMX = _quiet('log_' + 'soft' + 'max')
