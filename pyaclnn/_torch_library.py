"""The ``aclnn`` operator library: one ``torch.library`` definition per pyaclnn operator.

Every torch module of the package registers on these definitions (pyaclnn.torch_ops: the CPU
kernels, fakes and pyaclnn.functional's entry; pyaclnn._torch_autograd: autograd and forward
mode; pyaclnn._torch_vmap: batching rules) and none of them imports another to reach them.
"""

import torch

NAMESPACE = "aclnn"

LIBRARY = torch.library.Library(NAMESPACE, "DEF")
_TAGS = (torch.Tag.pt2_compliant_tag,)

#: name -> schema (without the name), in the order they are registered.
OPERATORS = {
    "replication_pad2d": "(Tensor x, int[] padding) -> Tensor",
    "replication_pad2d_backward": "(Tensor grad_output, Tensor x, int[] padding) -> Tensor",
    "upsample_nearest_exact1d": "(Tensor x, SymInt[] output_size, float? scales=None) -> Tensor",
    "upsample_nearest_exact1d_backward":
        "(Tensor grad_output, SymInt[] output_size, SymInt[] input_size, float? scales=None)"
        " -> Tensor",
    "max_pool2d_with_mask":
        "(Tensor x, int[] kernel_size, int[] stride, int[] padding, int[] dilation, "
        "bool ceil_mode) -> (Tensor, Tensor)",
    "max_pool2d_with_mask_backward":
        "(Tensor grad_output, Tensor x, Tensor mask, int[] kernel_size, int[] stride, "
        "int[] padding, int[] dilation, bool ceil_mode) -> Tensor",
    "max_pool2d_with_indices":
        "(Tensor x, int[] kernel_size, int[] stride, int[] padding, int[] dilation, "
        "bool ceil_mode, ScalarType? indices_dtype=None) -> (Tensor, Tensor)",
    "max_pool2d_with_indices_backward":
        "(Tensor grad_output, Tensor x, Tensor indices, int[] kernel_size, int[] stride, "
        "int[] padding, int[] dilation, bool ceil_mode) -> Tensor",
    "im2col":
        "(Tensor x, int[] kernel_size, int[] dilation, int[] padding, int[] stride, "
        "ScalarType? out_dtype=None) -> Tensor",
    "im2col_backward":
        "(Tensor grad_output, SymInt[] input_size, int[] kernel_size, int[] dilation, "
        "int[] padding, int[] stride, ScalarType? out_dtype=None) -> Tensor",
    "prelu": "(Tensor x, Tensor weight, ScalarType? out_dtype=None) -> Tensor",
    "prelu_backward": "(Tensor grad_output, Tensor x, Tensor weight) -> (Tensor, Tensor)",
}

for _name, _schema in OPERATORS.items():
    LIBRARY.define(_name + _schema, tags=_TAGS)

ops = getattr(torch.ops, NAMESPACE)
#: name -> its default overload.
OVERLOADS = {name: getattr(ops, name).default for name in OPERATORS}
