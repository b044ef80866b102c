"""The numpy/C path of the operators: one module per operator pair, ``_<op>.py``, whose
functions take arrays (numpy, torch CPU tensors, DLPack objects), launch the library's
operator and return arrays, listing their public names in ``__all__``.

This is the bottom of the Python operator layers; each layer imports only those below it:

    pyaclnn.functional (the public calls)  ->  pyaclnn.torch_ops (torch.ops.aclnn: kernels, fakes,
    the eager lane; autograd, vmap and autocast in pyaclnn._torch_*)  ->  pyaclnn._operators
    ->  pyaclnn._dispatch (executor cache, results), pyaclnn._interop, pyaclnn.mask

The torch ops' CPU kernels are these functions; they hold no autograd (a torch call reaches
them below the dispatcher's autograd) and never import torch_ops or functional.
"""
