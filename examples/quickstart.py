"""pyaclnn quick start: numpy in, numpy out, and the same op through the two-phase calls."""
import numpy as np

import pyaclnn
from pyaclnn import functional as F

x = np.arange(2 * 3 * 3, dtype=np.float32).reshape(1, 2, 3, 3) - 8.0
weight = np.array([0.1, 0.5], dtype=np.float32)

print("prelu(x, weight) =\n", F.prelu(x, weight))

# The same call through the two-phase API, as a C program would make it.
with pyaclnn.Tensor.from_numpy(x) as self_t, pyaclnn.Tensor.from_numpy(weight) as weight_t, \
        pyaclnn.Tensor.empty(x.shape, np.float32) as out_t:
    workspace_size, executor = pyaclnn.aclnnPreluGetWorkspaceSize(self_t, weight_t, out_t)
    pyaclnn.aclnnPrelu(None, workspace_size, executor)
    pyaclnn.synchronize()
    result = out_t.numpy()

expected = np.where(x > 0, x, x * weight.reshape(1, 2, 1, 1))
assert np.array_equal(result, expected)
print("two-phase result matches numpy")

# Bad input raises a typed exception with CANN's status code and message.
try:
    F.replication_pad2d(np.zeros((2, 2), np.float32), [1, 1, 1, 1])
except pyaclnn.AclnnError as err:
    print(f"caught {type(err).__name__}: code {err.code}: {err.message}")
