"""Every validation rule of aclnnMaxPool2dWithMask[Backward] (docs/compatibility.md, MaxPool2dWithMask): the status
code CANN returns and a message that names the parameter.  Order matters: where two rules are
broken at once, the one CANN checks first must win."""
import numpy as np
import pytest

import pyaclnn
from pyaclnn import lib

NULLPTR, INVALID = 161001, 161002

# A valid forward call: self [2,3,6,6] fp32, k3 s2 p1 -> out [2,3,3,3], mask [2,3,9,64].
BASE = dict(self=((2, 3, 6, 6), np.float32, None), kernel=[3, 3], stride=[2, 2], padding=[1, 1],
            dilation=[1, 1], ceil=False, out=((2, 3, 3, 3), np.float32, None),
            indices=((2, 3, 9, 64), np.int8, None))


def _tensor(spec, keep):
    if spec is None:
        return None
    shape, dtype, fmt = spec
    t = pyaclnn.Tensor.empty(shape, dtype, format=fmt)
    keep.append(t)
    return t


def _array(values, keep):
    if values is None:
        return None
    a = pyaclnn.IntArray(values)
    keep.append(a)
    return a


def call_forward(**changes):
    args = dict(BASE, **changes)
    keep = []
    try:
        return pyaclnn.aclnnMaxPool2dWithMaskGetWorkspaceSize(
            _tensor(args["self"], keep), _array(args["kernel"], keep), _array(args["stride"], keep),
            _array(args["padding"], keep), _array(args["dilation"], keep), args["ceil"],
            _tensor(args["out"], keep), _tensor(args["indices"], keep))
    finally:
        for obj in keep:
            obj.close()


BACK = dict(grad=((2, 3, 3, 3), np.float32, None), self=((2, 3, 6, 6), np.float32, None),
            indices=((2, 3, 9, 64), np.int8, None), kernel=[3, 3], stride=[2, 2], padding=[1, 1],
            dilation=[1, 1], ceil=False, grad_input=((2, 3, 6, 6), np.float32, None))


def call_backward(**changes):
    args = dict(BACK, **changes)
    keep = []
    try:
        return pyaclnn.aclnnMaxPool2dWithMaskBackwardGetWorkspaceSize(
            _tensor(args["grad"], keep), _tensor(args["self"], keep), _tensor(args["indices"], keep),
            _array(args["kernel"], keep), _array(args["stride"], keep), _array(args["padding"], keep),
            _array(args["dilation"], keep), args["ceil"], _tensor(args["grad_input"], keep))
    finally:
        for obj in keep:
            obj.close()


def expect(fn, code, word, **changes):
    with pytest.raises(pyaclnn.AclnnError) as err:
        ws, ex = fn(**changes)
        ex.close()
    assert err.value.code == code, (changes, err.value.code, err.value.message)
    assert word in err.value.message, (word, err.value.message)


F32, F16 = np.float32, np.float16
FRACTAL_Z_3D = 33

FORWARD_RULES = [
    # (id, changes, code, word the message must contain)
    ("kernel-null", dict(kernel=None), NULLPTR, "kernelSize"),
    ("self-null", dict(self=None), NULLPTR, "self"),
    ("out-null", dict(out=None), NULLPTR, "out"),
    ("kernel-empty", dict(kernel=[]), INVALID, "kernelSize"),
    ("kernel-3", dict(kernel=[3, 3, 3]), INVALID, "kernelSize"),
    ("kernel-3-before-null-stride", dict(kernel=[3, 3, 3], stride=None), INVALID, "kernelSize"),
    ("self-null-before-kernel-len", dict(kernel=[3, 3, 3], self=None), NULLPTR, "self"),
    ("stride-null", dict(stride=None), NULLPTR, "stride"),
    ("padding-null", dict(padding=None), NULLPTR, "padding"),
    ("dilation-null", dict(dilation=None), NULLPTR, "dilation"),
    ("indices-null", dict(indices=None), NULLPTR, "indices"),
    ("self-int32", dict(self=((2, 3, 6, 6), np.int32, None)), INVALID, "self"),
    ("self-double", dict(self=((2, 3, 6, 6), np.float64, None), out=((2, 3, 3, 3), np.float64, None)),
     INVALID, "self"),
    ("out-dtype", dict(out=((2, 3, 3, 3), F16, None)), INVALID, "out"),
    ("indices-float", dict(indices=((2, 3, 9, 64), F32, None)), INVALID, "indices"),
    ("indices-uint8", dict(indices=((2, 3, 9, 64), np.uint8, None)), INVALID, "indices"),
    ("dtype-before-format", dict(self=((2, 3, 6, 6), np.int32, "ND"), out=((2, 3, 3, 3), F32, "NCHW")),
     INVALID, "dtype"),
    ("format-mismatch", dict(self=((2, 3, 6, 6), F32, "ND"), out=((2, 3, 3, 3), F32, "NCHW")), INVALID,
     "format"),
    ("format-private", dict(self=((2, 3, 6, 6), F32, FRACTAL_Z_3D), out=((2, 3, 3, 3), F32, FRACTAL_Z_3D)),
     INVALID, "format"),
    ("self-2d", dict(self=((6, 6), F32, None)), INVALID, "self"),
    ("self-5d", dict(self=((1, 2, 3, 6, 6), F32, None)), INVALID, "self"),
    ("stride-3", dict(stride=[2, 2, 2]), INVALID, "stride"),
    ("padding-empty", dict(padding=[]), INVALID, "padding"),
    ("padding-3", dict(padding=[1, 1, 1]), INVALID, "padding"),
    ("dilation-empty", dict(dilation=[]), INVALID, "dilation"),
    ("dilation-3", dict(dilation=[1, 1, 1]), INVALID, "dilation"),
    ("kernel-0", dict(kernel=[0, 3]), INVALID, "kernelSize"),
    ("kernel-negative", dict(kernel=[3, -1]), INVALID, "kernelSize"),
    ("stride-0", dict(stride=[0]), INVALID, "stride"),
    ("stride-negative", dict(stride=[2, -2]), INVALID, "stride"),
    ("pad-negative", dict(padding=[-1, 0]), INVALID, "padding"),
    ("pad-over-half", dict(padding=[2, 1]), INVALID, "padding"),
    ("pad-before-dilation", dict(padding=[2, 1], dilation=[2, 2]), INVALID, "padding"),
    ("dilation-2", dict(dilation=[2, 2]), INVALID, "dilation"),
    ("dilation-0", dict(dilation=[1, 0]), INVALID, "dilation"),
    ("channels-0", dict(self=((2, 0, 6, 6), F32, None), out=((2, 0, 3, 3), F32, None),
                        indices=((2, 0, 9, 64), np.int8, None)), INVALID, "C"),
    ("height-0", dict(self=((2, 3, 0, 6), F32, None)), INVALID, "H"),
    ("output-empty", dict(self=((1, 1, 1, 1), F32, None), kernel=[4, 4], stride=[1], padding=[0]), INVALID,
     "output size"),
    ("out-shape", dict(out=((2, 3, 3, 4), F32, None)), INVALID, "out"),
    ("out-rank", dict(out=((6, 3, 3), F32, None)), INVALID, "out"),
    ("indices-shape", dict(indices=((2, 3, 9, 96), np.int8, None)), INVALID, "indices"),
    ("indices-int32-shape", dict(indices=((2, 3, 9, 16), np.int32, None)), INVALID, "indices"),
]


@pytest.mark.parametrize("changes,code,word", [r[1:] for r in FORWARD_RULES], ids=[r[0] for r in FORWARD_RULES])
def test_forward_rule(changes, code, word):
    expect(call_forward, code, word, **changes)


def test_forward_valid_forms_pass():
    for changes in (dict(), dict(kernel=[3], stride=[], padding=[1], dilation=[1], out=((2, 3, 2, 2), F32, None)),
                    dict(self=((3, 6, 6), F16, "ND"), out=((3, 3, 3), F16, "ND"), indices=((3, 9, 64), np.int8, None)),
                    dict(self=((2, 3, 6, 6), F32, "NCHW"), out=((2, 3, 3, 3), F32, "NCHW"))):
        ws, ex = call_forward(**changes)
        ex.close()
    # N = 0 is fine; 0 elements everywhere
    ws, ex = call_forward(self=((0, 3, 6, 6), F32, None), out=((0, 3, 3, 3), F32, None),
                          indices=((0, 3, 9, 64), np.int8, None))
    assert ws == 0
    ex.close()


BACKWARD_RULES = [
    ("kernel-null", dict(kernel=None), NULLPTR, "kernelSize"),
    ("self-null", dict(self=None), NULLPTR, "self"),
    ("grad-null", dict(grad=None), NULLPTR, "gradOutput"),
    # CANN's documented quirk: a wrong kernelSize length is NULLPTR in the backward
    ("kernel-3-is-nullptr", dict(kernel=[3, 3, 3]), NULLPTR, "kernelSize"),
    ("kernel-empty-is-nullptr", dict(kernel=[]), NULLPTR, "kernelSize"),
    # ... and CANN would crash here reading stride/padding/dilation sizes; we must not
    ("kernel-3-null-stride", dict(kernel=[3, 3, 3], stride=None, padding=None, dilation=None), NULLPTR,
     "kernelSize"),
    ("indices-null", dict(indices=None), NULLPTR, "indices"),
    ("stride-null", dict(stride=None), NULLPTR, "stride"),
    ("padding-null", dict(padding=None), NULLPTR, "padding"),
    ("dilation-null", dict(dilation=None), NULLPTR, "dilation"),
    ("grad-input-null", dict(grad_input=None), NULLPTR, "gradInput"),
    ("self-int32", dict(self=((2, 3, 6, 6), np.int32, None)), INVALID, "self"),
    ("grad-dtype", dict(grad=((2, 3, 3, 3), F16, None)), INVALID, "gradOutput"),
    ("grad-input-dtype", dict(grad_input=((2, 3, 6, 6), F16, None)), INVALID, "gradInput"),
    ("indices-float", dict(indices=((2, 3, 9, 64), F32, None)), INVALID, "indices"),
    ("format-mismatch", dict(grad=((2, 3, 3, 3), F32, "ND"), self=((2, 3, 6, 6), F32, "NCHW"),
                             grad_input=((2, 3, 6, 6), F32, "NCHW")), INVALID, "format"),
    ("indices-private", dict(indices=((2, 3, 9, 64), np.int8, FRACTAL_Z_3D)), INVALID, "indices"),
    ("self-2d", dict(self=((6, 6), F32, None), grad_input=((6, 6), F32, None)), INVALID, "self"),
    ("grad-input-5d", dict(grad_input=((1, 2, 3, 6, 6), F32, None)), INVALID, "gradInput"),
    ("grad-2d", dict(grad=((3, 3), F32, None)), INVALID, "gradOutput"),
    ("indices-2d", dict(indices=((54, 64), np.int8, None)), INVALID, "indices"),
    ("stride-3", dict(stride=[2, 2, 2]), INVALID, "stride"),
    ("padding-empty", dict(padding=[]), INVALID, "padding"),
    ("dilation-3", dict(dilation=[1, 1, 1]), INVALID, "dilation"),
    ("kernel-0", dict(kernel=[0]), INVALID, "kernelSize"),
    ("stride-0", dict(stride=[0, 1]), INVALID, "stride"),
    ("pad-over-half", dict(padding=[1, 2]), INVALID, "padding"),
    ("pad-negative", dict(padding=[-1]), INVALID, "padding"),
    ("dilation-2", dict(dilation=[2]), INVALID, "dilation"),
    ("grad-input-shape", dict(grad_input=((2, 3, 6, 7), F32, None)), INVALID, "gradInput"),
    ("channels-0", dict(self=((2, 0, 6, 6), F32, None), grad_input=((2, 0, 6, 6), F32, None),
                        grad=((2, 0, 3, 3), F32, None)), INVALID, "C"),
    ("output-empty", dict(self=((1, 1, 1, 1), F32, None), grad_input=((1, 1, 1, 1), F32, None),
                          kernel=[4], stride=[1], padding=[0]), INVALID, "output size"),
    ("grad-shape", dict(grad=((2, 3, 3, 2), F32, None)), INVALID, "gradOutput"),
    ("indices-too-small", dict(indices=((2, 3, 1, 8), np.int8, None)), INVALID, "indices"),
]


@pytest.mark.parametrize("changes,code,word", [r[1:] for r in BACKWARD_RULES], ids=[r[0] for r in BACKWARD_RULES])
def test_backward_rule(changes, code, word):
    expect(call_backward, code, word, **changes)


def test_backward_valid_forms_pass():
    # CANN does not enforce the mask shape: any 3-D/4-D INT8 tensor large enough is accepted.
    for changes in (dict(), dict(indices=((6, 9, 64), np.int8, None)), dict(indices=((1, 1, 1, 216), np.int8, None)),
                    dict(kernel=[3], stride=[], padding=[1], grad=((2, 3, 2, 2), F32, None)),
                    # 1x1 kernel: the mask is not read, so its size does not matter
                    dict(kernel=[1, 1], stride=[2], padding=[0], indices=((1, 1, 1, 1), np.int8, None))):
        ws, ex = call_backward(**changes)
        ex.close()
    ws, ex = call_backward(self=((0, 3, 6, 6), F32, None), grad_input=((0, 3, 6, 6), F32, None),
                           grad=((0, 3, 3, 3), F32, None), indices=((0, 3, 9, 64), np.int8, None))
    assert ws == 0
    ex.close()
