"""The eager lane: a repeated plain eager ``pyaclnn.functional`` call on torch tensors goes straight
to the executor its first call launched (docs/python.md, "The eager lane").

A call with torch tensors runs, in plain eager mode, through pyaclnn.torch_ops and the operator's
functional function, whose argument handling costs more than the kernel of a small call.  When
such a call launched exactly one cached executor (pyaclnn._dispatch) with the call's own tensors
as its inputs (in order) and returned that launch's results unchanged, its signature - the
arguments as given, tensors by shape and dtype, everything else by type and value - gets a lane
to that executor: the argument handling is deterministic in the signature, so the next call
with the same signature rebinds the executor's addresses, allocates the results and runs phase 2.

A small call's time is mostly Python's, so the path a lane takes is written for few bytecodes:
one function describes the call and looks the lane up (:func:`make_entry`), and one closure per
lane, holding everything it reads, runs it (:func:`_runner`).
"""

import torch
from torch import Tensor
from torch.nn import Parameter

from . import _core, _dispatch
from ._core import ffi, function
from ._interop import has_instance
from ._dispatch import (NULL, _local, _run_cached, _set_address, _workspace, launches_of,
                        raise_launch_error, with_keywords)

LANE_ENTRIES = 2 * _dispatch.CACHE_ENTRIES     # lanes kept per thread (all dropped when full)
# Arguments a signature takes besides tensors and tuples or lists of ints: their type is part of
# the signature (1, 1.0 and True are equal keys), and their value is fixed for their lifetime.
_SCALARS = frozenset((int, float, bool, str, type(None), torch.dtype))

# torch.compile's tracer must not follow a call into its lane (it takes the overload through
# torch_ops); it reads this function as True while it traces.  Cheaper than is_compiling (one
# frame instead of two), whose other cases - torch.export's and AOT autograd's tracing - pass
# fake tensors under a dispatch mode, which no lane takes.
_dynamo_tracing = torch.compiler.is_dynamo_compiling
_tracing_state = torch._C._get_tracing_state
_dispatch_modes = torch._C._len_torch_dispatch_stack
_function_modes = torch._C._is_torch_function_mode_enabled
_profiling = torch._C._autograd._profiler_enabled
_functorch_active = torch._C._are_functorch_transforms_active
_autocasting = torch._C._is_any_autocast_enabled
_forward_ad = torch.autograd.forward_ad      # its _current_level is >= 0 inside a dual level
_grad_enabled = torch.is_grad_enabled
_empty_like = torch.empty_like
_thread_soc = _core.thread_soc
_dispatch._torch_tensor_class()      # torch is imported: pyaclnn._dispatch.launch can tell tensors


def watched():
    """Whether something watches the dispatcher: jit.trace, a TorchDispatchMode or
    TorchFunctionMode, the profiler, a functorch transform (vmap, grad, jvp: their tensors are
    wrappers without storage, and only the dispatcher unwraps them), a forward-AD dual level
    (a dual tensor does not require grad, yet its tangent must reach the op's autograd) or
    autocast (its casts are the dispatcher's AutocastCPU kernels).  torch.compile is asked
    apart: it takes the overload."""
    return _tracing_state() is not None or _dispatch_modes() or _function_modes() \
        or _profiling() or _functorch_active() or _forward_ad._current_level >= 0 \
        or _autocasting()


def make_entry(routes):
    """pyaclnn.functional's entry once torch is in use: ``entry(name, function, args, kwargs)``
    runs ``routes[name](*args, **kwargs)`` when an argument is a torch tensor - through its
    lane when the call is a plain eager one seen before - and ``function(*args, **kwargs)``
    (the numpy path) otherwise.

    A call can take a lane when nothing watches the dispatcher (nor torch.compile traces it),
    its tensors are contiguous CPU tensors of class Tensor (or Parameter), none complex nor a negative view
    and none requiring grad while grad mode is on, and its other arguments are Python scalars,
    strings, None, torch dtypes or tuples and lists of ints.  Its signature: the operator, the
    product selection (an executor keeps the product it was planned on), and each argument as
    given - keywords in their order."""
    def functional_entry(name, function, args, kwargs):
        if _dynamo_tracing() or watched():
            return _route(routes[name], function, args, kwargs)
        grad = _grad_enabled()
        key = [name, _core.soc_epoch, _thread_soc.name]
        pointers = []
        for value in args if not kwargs else with_keywords(args, kwargs):
            kind = type(value)
            if kind is Tensor or kind is Parameter:    # a Parameter is a plain tensor to torch
                if not value.is_cpu or value.is_neg() or not value.is_contiguous() \
                        or grad and value.requires_grad:
                    break
                # No test for a conjugate view: no lane has a complex tensor (_remember).  No
                # test for an empty tensor: an empty call is never cached, so has no lane.
                key += (value.shape, value.dtype)
                pointers.append(value.data_ptr())
            elif kind is tuple or kind is list:
                for item in value:
                    if type(item) is not int:
                        break
                else:
                    key += (kind, tuple(value))
                    continue
                break
            elif kind in _SCALARS:
                key += (kind, value)
            else:
                break
        else:
            if not pointers:                      # no tensor: the numpy path
                return function(*args, **kwargs)
            key = tuple(key)
            run = _local.lanes.get(key)
            if run is not None:
                results = run(pointers)
                if results is not None:          # None: the executor was evicted
                    return results
            return _remember(key, args, kwargs, routes[name])
        return _route(routes[name], function, args, kwargs)
    return functional_entry


def _route(route, function, args, kwargs):
    """A call that takes no lane: ``route`` (torch_ops) when an argument is a torch tensor,
    ``function`` (the numpy path) otherwise."""
    if has_instance(Tensor, args, kwargs):
        return route(*args, **kwargs)
    return function(*args, **kwargs)


def lanes():
    """The calling thread's lanes: signature -> the function that runs the call with the
    tensors' data pointers and returns its results, or None once its executor is gone."""
    return _local.lanes


def _remember(key, args, kwargs, route):
    """``route(*args, **kwargs)``; opens a lane for ``key`` when the call qualifies (above)."""
    result, launched = launches_of(route, args, kwargs)
    if len(launched) != 1:
        return result
    executor, inputs, made, outputs, kind = launched[0]
    tensors = [value for value in (args if not kwargs else with_keywords(args, kwargs))
               if type(value) is Tensor or type(value) is Parameter]
    if len(inputs) != len(tensors) or any(a is not b for a, b in zip(inputs, tensors)):
        return result
    if any(tensor.dtype.is_complex for tensor in tensors):
        return result           # a conjugate view has its dtype: no complex call takes a lane
    single = not isinstance(result, (tuple, list))
    returned = (result,) if single else result
    if len(returned) != len(made) or any(a is not b for a, b in zip(returned, made)):
        return result
    lanes = _local.lanes
    if len(lanes) >= LANE_ENTRIES:
        lanes.clear()
    lanes[key] = _runner(executor, outputs, kind, single)
    return result


def _runner(executor, outputs, kind, single):
    """The function a lane calls with the tensors' data pointers: rebinds and runs ``executor``
    and returns its results, or None once the executor is gone (evicted from the cache).  Built
    once per signature, with what it reads held in the closure."""
    templates = executor.templates
    if templates is None:                   # large results: the result cache's blocks
        def run_large(pointers):
            if executor.pointer is None:
                return None
            made = _run_cached(executor, pointers, outputs, kind)
            return made[0] if single else tuple(made)
        return run_large

    descriptors = tuple(executor.inputs + executor.outputs)
    bound = executor.bound                  # shared with pyaclnn._dispatch's rebinding
    first = len(executor.inputs)
    results = tuple(enumerate(templates, first))
    # one result laid out as torch's own (most small calls): no loop, no permute
    plain = templates[0][0] if single and len(templates) == 1 and not templates[0][1] else None
    size, phase2, name = executor.workspace_size, executor.phase2, executor.name
    # phase 2 and the wait in one foreign call: a cffi call costs ~0.15 us, 2-3 % of a small call
    launch_and_wait, waited = function("aclnnCpuLaunchAndSynchronize"), ffi.new("aclError *")

    def run_small(pointers):                # every result small
        handle = executor.pointer
        if handle is None:
            return None
        if pointers != bound[:first]:       # an input moved (a weight passed again has not)
            _rebind(pointers, bound, descriptors)
        if plain is not None:
            made = _empty_like(plain)
            pointer = made.data_ptr()
            if pointer != bound[first]:
                _set_address(descriptors[first], pointer)
                bound[first] = pointer
        else:
            made = _fresh_results(results, bound, descriptors)
            made = made[0] if single else made
        status = launch_and_wait(phase2, _workspace(size) if size else NULL, size, handle, NULL,
                                 waited)
        if status:
            raise_launch_error(status, waited[0], name)
        return made
    return run_small


def _rebind(pointers, bound, descriptors):
    """Points the descriptors of the inputs that moved at their new addresses."""
    for index, pointer in enumerate(pointers):
        if pointer != bound[index]:
            _set_address(descriptors[index], pointer)
            bound[index] = pointer


def _fresh_results(results, bound, descriptors):
    """New small results (torch.empty_like of each template), their descriptors pointed at them."""
    made = []
    for index, (template, channels_last) in results:
        result = _empty_like(template)
        pointer = result.data_ptr()
        if pointer != bound[index]:
            _set_address(descriptors[index], pointer)
            bound[index] = pointer
        made.append(result.permute(0, 3, 1, 2) if channels_last else result)
    return tuple(made)
