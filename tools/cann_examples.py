#!/usr/bin/env python3
"""Builds CANN's own example programs for our operators, unchanged, against this tree; runs them
and checks the numbers they print against PyTorch (docs/compatibility.md, "CANN's official
examples").

    python3 tools/cann_examples.py --ops-nn DIR --ops-math DIR --ops-cv DIR [--lib build/lib64/libaclnn.so]

DIR is a checkout of hicann/ops-nn, ops-math or ops-cv, or a bare git mirror of one (read with
`git show HEAD:<path>`).  Every `examples/**/test_aclnn_*.cpp` that calls one of our twelve
operators is copied to a temporary directory and compiled with the g++ line of that repository's
own example runner (`bash build.sh --run_example <op> eager`), pointed at a `make install`-style
tree of this build:

    ops-nn    build.sh build_single_example:        -lopapi_nn -lopapi_math -lascendcl -lnnopbase
    ops-math  scripts/build_example.sh (default):   -lopapi_math -lascendcl -lnnopbase
    ops-cv    scripts/build_example.sh (default):   -lopapi_cv -lascendcl -lnnopbase
    experimental/ (the "cust" package mode):        -lcust_opapi [-lopapi_math] -lascendcl -lnnopbase

For the cust mode the tool lays out the vendor directory CANN's runner expects
(opp/vendors/custom_<repo>/op_api/{include,lib}) with a libcust_opapi.so that is a filter library
for libaclnn.so, like our other CANN names (docs/libraries.md).  Examples under arch35/ and
experimental/ are written for the Ascend950 and run with ACLNN_SOC_VERSION=Ascend950; the others
on the default product.  The expected numbers are computed with PyTorch from the inputs the
example's source declares (its std::vector literals, fills, shapes, dtypes and attributes).

The C++ examples are not part of this repository: they stay in CANN's repositories.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

OPS = ["ReplicationPad2d", "ReplicationPad2dBackward", "UpsampleNearestExact1d",
       "UpsampleNearestExact1dBackward", "MaxPool2dWithMask", "MaxPool2dWithMaskBackward",
       "MaxPool2dWithIndices", "MaxPool2dWithIndicesBackward", "Im2col", "Im2colBackward",
       "Prelu", "PreluBackward"]
CALL = re.compile(r"\baclnn(\w+?)GetWorkspaceSize\s*\(")
ASCEND950 = "Ascend950"


# ---- reading a repository: a checkout or a bare mirror ----------------------------------------

class Repo:
    """Lists and reads files of a checkout (a directory tree) or of a bare git repository (HEAD)."""

    def __init__(self, key, path):
        self.key, self.path = key, Path(path)
        bare = subprocess.run(["git", "-C", str(self.path), "rev-parse", "--is-bare-repository"],
                              capture_output=True, text=True)
        self.bare = bare.returncode == 0 and bare.stdout.strip() == "true"

    def files(self):
        if self.bare:
            out = subprocess.run(["git", "-C", str(self.path), "ls-tree", "-r", "--name-only", "HEAD"],
                                 capture_output=True, text=True, check=True).stdout
            return out.splitlines()
        return [str(p.relative_to(self.path)) for p in self.path.rglob("*.cpp")]

    def read(self, rel):
        if self.bare:
            return subprocess.run(["git", "-C", str(self.path), "show", f"HEAD:{rel}"],
                                  capture_output=True, text=True, check=True).stdout
        return (self.path / rel).read_text()


def is_example(rel):
    return re.search(r"(^|/)examples/(.+/)?test_aclnn_\w+\.cpp$", rel) is not None


def called_ops(source):
    """Our operators the source calls (phase 1), in order of first call."""
    found = []
    for name in CALL.findall(strip_comments(source)):
        if name in OPS and name not in found:
            found.append(name)
    return found


def product_of(rel):
    """The product an example is written for: arch35/ and experimental/ ones are Ascend950's."""
    if "/arch35/" in rel or rel.startswith("experimental/"):
        return ASCEND950
    return "default"


# ---- compile lines ----------------------------------------------------------------------------

def compile_command(repo_key, rel, source_file, exe, prefix):
    """The g++ line of the repository's example runner for this example, pointed at `prefix`."""
    inc, lib = prefix / "include", prefix / "lib64"
    if rel.startswith("experimental/"):
        vendor = cust_vendor(prefix, repo_key)
        libs = ["-lcust_opapi", "-lopapi_math"] if repo_key == "ops-nn" else ["-lcust_opapi"]
        return ["g++", str(source_file), f"-I{vendor / 'include'}", f"-I{inc}", f"-I{inc / 'aclnnop'}",
                f"-L{vendor / 'lib'}", f"-L{lib}", *libs, "-lascendcl", "-lnnopbase", "-o", str(exe),
                f"-Wl,-rpath={vendor / 'lib'}"]
    if repo_key == "ops-nn":
        return ["g++", str(source_file), f"-I{inc}", f"-I{inc / 'aclnnop'}", f"-I{inc / 'aclnn'}",
                f"-L{prefix / 'opp' / 'lib64'}", f"-L{lib}", "-lopapi_nn", "-lopapi_math", "-lascendcl",
                "-lnnopbase", "-o", str(exe)]
    op_lib = {"ops-math": "-lopapi_math", "ops-cv": "-lopapi_cv"}[repo_key]
    return ["g++", str(source_file), f"-I{inc}", f"-I{inc / 'aclnn'}", f"-L{lib}", op_lib, "-lascendcl",
            "-lnnopbase", "-o", str(exe)]


def cust_vendor(prefix, repo_key):
    return prefix / "opp" / "vendors" / f"custom_{repo_key.split('-')[1]}" / "op_api"


def install_tree(prefix, lib):
    """`make install`'s tree for `lib`, plus the cust vendor directories CANN's runner links."""
    subprocess.run([sys.executable, str(ROOT / "tools" / "install_tree.py"), "--prefix", str(prefix),
                    "--lib", str(lib)], check=True, capture_output=True)
    source = subprocess.run(["sh", str(ROOT / "tools" / "cann_filter.sh"), "libopapi.so", str(lib)],
                            check=True, capture_output=True, text=True).stdout
    for key in ("ops-nn", "ops-math", "ops-cv"):
        vendor = cust_vendor(prefix, key)
        (vendor / "include" / "aclnnop").mkdir(parents=True, exist_ok=True)
        (vendor / "lib").mkdir(parents=True, exist_ok=True)
        c_file = vendor / "lib" / "cust_opapi.c"
        c_file.write_text(source.replace("libopapi.so", "libcust_opapi.so"))
        subprocess.run(["cc", "-std=c11", "-O2", "-fPIC", "-shared", str(c_file), "-o",
                        str(vendor / "lib" / "libcust_opapi.so"), "-Wl,-soname,libcust_opapi.so",
                        "-Wl,--filter=libaclnn.so"], check=True, capture_output=True)


def run_env(prefix, product):
    """What `. set_env.sh` exports, plus the product."""
    env = dict(os.environ)
    env.update(ASCEND_HOME_PATH=str(prefix), ASCEND_TOOLKIT_HOME=str(prefix),
               ASCEND_CUSTOM_PATH=str(prefix), ASCEND_OPP_PATH=str(prefix / "opp"),
               LD_LIBRARY_PATH=str(prefix / "lib64") + os.pathsep + env.get("LD_LIBRARY_PATH", ""))
    env.pop("ACLNN_SOC_VERSION", None)
    if product != "default":
        env["ACLNN_SOC_VERSION"] = product
    return env


# ---- reading an example's inputs from its source ---------------------------------------------

def strip_comments(source):
    source = re.sub(r"/\*.*?\*/", " ", source, flags=re.S)
    return re.sub(r"//[^\n]*", "", source)


def c_eval(expr, scalars):
    """Value of a C constant expression made of numbers, names in `scalars`, + - * / and casts."""
    expr = expr.strip()
    expr = re.sub(r"static_cast<[^>]+>\((.*)\)", r"(\1)", expr)
    expr = re.sub(r"\b(\d+\.\d*|\.\d+|\d+)[fFuUlL]+\b", r"\1", expr)
    expr = re.sub(r"(\d\.)[fF]\b", r"\1", expr)
    expr = expr.replace("true", "1").replace("false", "0")
    tree = ast.parse(expr, mode="eval")
    allowed = (ast.Expression, ast.BinOp, ast.UnaryOp, ast.Constant, ast.Name, ast.Load, ast.Add,
               ast.Sub, ast.Mult, ast.Div, ast.USub, ast.UAdd)
    for node in ast.walk(tree):
        if not isinstance(node, allowed):
            raise ValueError(f"not a constant expression: {expr}")
        if isinstance(node, ast.Name) and node.id not in scalars:
            raise ValueError(f"unknown name {node.id} in {expr}")
    return eval(compile(tree, "<c>", "eval"), {"__builtins__": {}}, dict(scalars))


def split_args(text):
    """Top-level comma split (braces and parentheses nest)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "({[":
            depth += 1
        elif ch in ")}]":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur.strip())
    return parts


SCALAR = re.compile(r"\b(?:const\s+|constexpr\s+)*(?:int64_t|int32_t|int|double|float|bool|size_t|uint64_t)"
                    r"\s+(\w+)\s*=\s*([^;{}]+);")
VECTOR_LIST = re.compile(r"std::vector<([\w:]+)>\s+(\w+)\s*=\s*\{([^}]*)\}\s*;", re.S)
VECTOR_CTOR = re.compile(r"std::vector<([\w:]+)>\s+(\w+)\s*\(([^;]*)\)\s*;")
FILL = re.compile(r"std::fill\(\s*(\w+)\.begin\(\),\s*\w+\.end\(\),\s*(.+)\);[ \t]*$", re.M)
FILL_N = re.compile(r"std::fill_n\(\s*(\w+)\.begin\(\),\s*([^,]+),\s*(.+)\);[ \t]*$", re.M)
TENSOR = re.compile(r"\bCreateAcl\w*Tensor\(\s*(\w+),\s*(\w+),\s*&\w+,\s*(?:aclDataType::)?(\w+),\s*&(\w+)\s*\)")
INT_ARRAY = re.compile(r"\b(\w+)\s*=\s*aclCreateIntArray\(\s*(\w+)\.data\(\)\s*,\s*([^)]+)\)")
TRAITS_DTYPE = re.compile(r"DataType\s+kTestDataType\s*=\s*DataType::(\w+)")
TRAITS_NAMES = {"FLOAT32": "ACL_FLOAT", "FLOAT16": "ACL_FLOAT16", "BFLOAT16": "ACL_BF16"}


class Source:
    """What an example declares: scalars, vectors (None for elements it never sets), tensors
    (data, shape, dtype) and int arrays, by C name."""

    def __init__(self, text):
        self.text = strip_comments(text)
        self.scalars = {}
        for name, expr in SCALAR.findall(self.text):
            try:
                self.scalars.setdefault(name, c_eval(expr, self.scalars))
            except (ValueError, SyntaxError):
                pass
        self.vectors = {}
        for _, name, body in VECTOR_LIST.findall(self.text):
            self.vectors.setdefault(name, [c_eval(v, self.scalars) for v in split_args(body)])
        for _, name, args in VECTOR_CTOR.findall(self.text):
            parts = split_args(args)
            if name in self.vectors or not parts:
                continue
            try:
                count = int(c_eval(parts[0], self.scalars))
            except (ValueError, SyntaxError):
                continue
            value = c_eval(parts[1], self.scalars) if len(parts) > 1 else 0
            self.vectors[name] = [value] * count
        self._apply_fills()
        self.tensors = {}
        for data, shape, dtype, name in TENSOR.findall(self.text):
            self.tensors.setdefault(name, (data, shape, self._dtype(dtype)))
        self.int_arrays = {name: data for name, data, _ in INT_ARRAY.findall(self.text)}

    def _apply_fills(self):
        """The first std::fill of a vector (for a dtype-generic example, its FLOAT32 branch's value,
        which every branch converts from) and std::fill_n."""
        filled = set()
        for name, expr in FILL.findall(self.text):
            if name in self.vectors and name not in filled:
                self.vectors[name] = [c_eval(expr, self.scalars)] * len(self.vectors[name])
                filled.add(name)
        for name, count, expr in FILL_N.findall(self.text):
            if name in self.vectors:
                n = int(c_eval(count, self.scalars))
                self.vectors[name][:n] = [c_eval(expr, self.scalars)] * n

    def _dtype(self, token):
        if token.startswith("ACL_"):
            return token
        chosen = TRAITS_DTYPE.search(self.text)  # DataTypeTraits<kTestDataType>::aclType
        if chosen and chosen.group(1) in TRAITS_NAMES:
            return TRAITS_NAMES[chosen.group(1)]
        raise ValueError(f"cannot tell the dtype {token}")

    def call_args(self, op):
        """The argument expressions of the example's aclnn<op>GetWorkspaceSize call."""
        match = re.search(rf"\baclnn{op}GetWorkspaceSize\s*\(", self.text)
        if not match:
            raise ValueError(f"no aclnn{op}GetWorkspaceSize call")
        depth, i = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(self.text[i], 0)
            i += 1
        return split_args(self.text[match.end():i - 1])

    def value(self, arg):
        """An argument as the reference sees it: a tensor (array with NaN for elements the example
        never set, shape, dtype), an int list, or a scalar."""
        import numpy as np
        arg = arg.strip().lstrip("&")
        arg = re.sub(r"\.tensor$", "", arg)
        if arg in self.tensors:
            data, shape, dtype = self.tensors[arg]
            dims = [int(d) for d in self.vectors[shape]]
            count = int(np.prod(dims)) if dims else 1
            values = [float(v) for v in self.vectors.get(data, [])][:count]
            values += [float("nan")] * (count - len(values))  # read past the vector: undefined
            return Tensor(np.array(values, dtype=np.float64).reshape(dims), dtype)
        if arg in self.int_arrays:
            return [int(v) for v in self.vectors[self.int_arrays[arg]]]
        if arg in self.scalars:
            return self.scalars[arg]
        return c_eval(arg, self.scalars)


class Tensor:
    def __init__(self, data, dtype):
        self.data, self.dtype = data, dtype


# ---- reading what an example prints ------------------------------------------------------------

VALUE = re.compile(r"(\w+)\[(\d+)\] is: ([-+]?(?:\d+\.?\d*(?:[eE][-+]?\d+)?|inf|nan))")


def parse_output(stdout):
    """The printed results as a list of (name, [values]): one entry per run of "name[i] is: v" lines
    with i counting from 0.  A line printing several values (inputs, then the result) counts as its
    "result" value, else its last one."""
    groups = []
    for line in stdout.splitlines():
        found = VALUE.findall(line)
        if not found:
            continue
        pick = [f for f in found if f[0] == "result"] or found
        name, index, value = pick[-1]
        if int(index) == 0 or not groups or groups[-1][0] != name or len(groups[-1][1]) != int(index):
            groups.append((name, []))
        groups[-1][1].append(float(value))
    return groups


def compare(printed, expected, rtol=1e-5, atol=2e-6):
    """(checked, correct, notes) of printed numbers against the reference.  An example may print
    only its first elements; a reference NaN means "undefined" (the example read past its data)
    and is not counted."""
    import numpy as np
    printed = np.asarray(printed, dtype=np.float64).ravel()
    expected = np.asarray(expected, dtype=np.float64).ravel()
    if printed.size > expected.size:
        return expected.size, 0, [f"printed {printed.size} values, expected {expected.size}"]
    notes = [f"first {printed.size} of {expected.size} printed"] if printed.size < expected.size else []
    expected = expected[:printed.size]
    defined = ~np.isnan(expected)
    good = np.isclose(printed, expected, rtol=rtol, atol=atol) & defined
    bad = np.flatnonzero(defined & ~good)
    if bad.size:
        notes.append(f"[{bad[0]}] {printed[bad[0]]:g} != {expected[bad[0]]:g}")
    if not defined.all():
        notes.append(f"{int((~defined).sum())} undefined (the example reads past its data)")
    return int(defined.sum()), int(good.sum()), notes


# ---- references (PyTorch) ---------------------------------------------------------------------

TORCH_DTYPES = {"ACL_FLOAT": "float32", "ACL_FLOAT16": "float16", "ACL_BF16": "bfloat16",
                "ACL_DOUBLE": "float64", "ACL_INT32": "int32", "ACL_INT64": "int64",
                "ACL_INT8": "int8", "ACL_UINT8": "uint8", "ACL_BOOL": "bool"}


def as_torch(t, grad=False):
    """The tensor's values in float64, after rounding to its own dtype (a half input holds the
    declared float rounded to half)."""
    import torch
    x = torch.from_numpy(t.data.copy())
    if t.dtype in ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"):
        x = x.to(getattr(torch, TORCH_DTYPES[t.dtype])).to(torch.float64)
    return x.requires_grad_(grad)


def rounded(x, dtype):
    """A float64 result rounded to the output's dtype, back in float64 (NaN kept for undefined)."""
    import torch
    x = x.detach()
    if dtype in ("ACL_FLOAT", "ACL_FLOAT16", "ACL_BF16"):
        return x.to(getattr(torch, TORCH_DTYPES[dtype])).to(torch.float64).numpy()
    return x.numpy()


def ref_prelu(a):
    import torch.nn.functional as F
    self, weight, out = a
    return [rounded(F.prelu(as_torch(self), as_torch(weight)), out.dtype)]


def ref_prelu_backward(a):
    import torch.nn.functional as F
    grad, self, weight, grad_in, grad_w = a
    x, w = as_torch(self, True), as_torch(weight, True)
    F.prelu(x, w).backward(as_torch(grad))
    return [rounded(x.grad, grad_in.dtype), rounded(w.grad, grad_w.dtype)]


def ref_replication_pad2d(a):
    import torch.nn.functional as F
    self, padding, out = a
    return [rounded(F.pad(as_torch(self), padding, mode="replicate"), out.dtype)]


def ref_replication_pad2d_backward(a):
    import torch.nn.functional as F
    grad, self, padding, grad_in = a
    x = as_torch(self, True)
    F.pad(x, padding, mode="replicate").backward(as_torch(grad))
    return [rounded(x.grad, grad_in.dtype)]


def _scale(scales):
    return scales if scales and scales > 0 else None


def ref_upsample(a):
    import torch
    self, output_size, scales, out = a
    y = torch.ops.aten._upsample_nearest_exact1d(as_torch(self), output_size, _scale(scales))
    return [rounded(y, out.dtype)]


def ref_upsample_backward(a):
    import torch
    grad, output_size, input_size, scales, out = a
    y = torch.ops.aten._upsample_nearest_exact1d_backward(as_torch(grad), output_size, input_size,
                                                         _scale(scales))
    return [rounded(y, out.dtype)]


def ref_im2col(a):
    import torch.nn.functional as F
    self, kernel, dilation, padding, stride, out = a
    x = as_torch(self)
    batched = x.dim() == 4
    y = F.unfold(x if batched else x.unsqueeze(0), kernel, dilation, padding, stride)
    return [rounded(y if batched else y.squeeze(0), out.dtype)]


def ref_im2col_backward(a):
    import torch.nn.functional as F
    grad, input_size, kernel, dilation, padding, stride, out = a
    g = as_torch(grad)
    batched = g.dim() == 3
    y = F.fold(g if batched else g.unsqueeze(0), input_size, kernel, dilation, padding, stride)
    return [rounded(y if batched else y.squeeze(0), out.dtype)]


def ref_max_pool_indices(a):
    import torch.nn.functional as F
    self, kernel, stride, padding, dilation, ceil_mode, out, indices = a
    y, idx = F.max_pool2d(as_torch(self), kernel, stride, padding, dilation, bool(ceil_mode), True)
    return [rounded(y, out.dtype), idx.to(float).numpy()]


def ref_max_pool_mask(a):
    """The pooled values; the mask bytes are a device layout PyTorch has no reference for."""
    return ref_max_pool_indices(a)[:1] + [None]


def ref_max_pool_indices_backward(a):
    import torch
    grad, self, indices, kernel, stride, padding, dilation, ceil_mode, grad_in = a
    g = as_torch(grad)
    n, c = g.shape[0], g.shape[1]
    flat = torch.zeros(n, c, self.data.shape[-2] * self.data.shape[-1], dtype=torch.float64)
    flat.scatter_add_(2, torch.from_numpy(indices.data).long().reshape(n, c, -1), g.reshape(n, c, -1))
    return [rounded(flat.reshape(self.data.shape), grad_in.dtype)]


def ref_max_pool_mask_backward(a):
    """Only a 1x1 kernel has a mask-independent answer: each window is one element, which takes
    its gradient (PyTorch's max_pool2d backward)."""
    import torch.nn.functional as F
    grad, self, mask, kernel, stride, padding, dilation, ceil_mode, grad_in = a
    if list(kernel) != [1, 1]:
        return [None]
    x = as_torch(self, True)
    F.max_pool2d(x, kernel, stride, padding, dilation, bool(ceil_mode)).backward(as_torch(grad))
    return [rounded(x.grad, grad_in.dtype)]


REFERENCES = {
    "Prelu": ref_prelu, "PreluBackward": ref_prelu_backward,
    "ReplicationPad2d": ref_replication_pad2d, "ReplicationPad2dBackward": ref_replication_pad2d_backward,
    "UpsampleNearestExact1d": ref_upsample, "UpsampleNearestExact1dBackward": ref_upsample_backward,
    "Im2col": ref_im2col, "Im2colBackward": ref_im2col_backward,
    "MaxPool2dWithIndices": ref_max_pool_indices, "MaxPool2dWithMask": ref_max_pool_mask,
    "MaxPool2dWithIndicesBackward": ref_max_pool_indices_backward,
    "MaxPool2dWithMaskBackward": ref_max_pool_mask_backward,
}


# how many of the call's arguments are the operator's (the rest: &workspaceSize, &executor)
REFERENCES_ARITY = {"Prelu": 3, "PreluBackward": 5, "ReplicationPad2d": 3, "ReplicationPad2dBackward": 4,
                    "UpsampleNearestExact1d": 4, "UpsampleNearestExact1dBackward": 5, "Im2col": 6,
                    "Im2colBackward": 7, "MaxPool2dWithIndices": 8, "MaxPool2dWithMask": 8,
                    "MaxPool2dWithIndicesBackward": 9, "MaxPool2dWithMaskBackward": 9}


def expected_outputs(source_text, op):
    """The reference arrays, one per printed output (None: not checkable), for the example's call."""
    src = Source(source_text)
    args = [src.value(a) for a in src.call_args(op)[:REFERENCES_ARITY[op]]]
    return REFERENCES[op](args)



# ---- the checksum example (ops-math experimental im2col) ----------------------------------------

RUN_CASE = re.compile(r"RunCase\(\s*\"(\w+)\",\s*\w+,\s*(ACL_\w+),\s*sizeof\((\w+)\),\s*(.*?)\);", re.S)
CHECKSUM_LINE = re.compile(r"^(\w+): output_elements=(\d+) checksum=(\d+)$", re.M)
INT_TYPES = {1: "<u1", 2: "<u2", 4: "<u4", 8: "<u8"}
C_SIZES = {"float": 4, "uint16_t": 2, "uint8_t": 1, "int8_t": 1, "int32_t": 4, "int64_t": 8, "double": 8}


def checksum_cases(source_text):
    """{case: (output elements, checksum)} computed from the RunCase calls: the input bytes are
    (i * TEST_DATA_MULTIPLIER + TEST_DATA_OFFSET) & BYTE_VALUE_MASK, or element & BOOL_VALUE_MASK for
    BOOL; im2col gathers whole elements (zeros for padding), so the output bytes follow from an
    unfold of the elements' integer values."""
    import numpy as np
    import torch
    import torch.nn.functional as F
    text = strip_comments(source_text)
    consts = {}
    for name, expr in re.findall(r"constexpr\s+\w+\s+(\w+)\s*=\s*([^;]+);", text):
        try:
            consts[name] = int(c_eval(expr.replace("std::numeric_limits<uint8_t>::max()", "255"), consts))
        except (ValueError, SyntaxError):
            pass
    result = {}
    for name, dtype, c_type, rest in RUN_CASE.findall(text):
        shape, kernel, dilation, padding, stride = [[int(v) for v in split_args(b.strip("{} \n"))]
                                                    for b in split_args(rest)]
        size = C_SIZES[c_type]
        count = int(np.prod(shape))
        index = np.arange(count * size, dtype=np.uint64)
        if dtype == "ACL_BOOL":
            raw = ((index // size) & consts["BOOL_VALUE_MASK"]).astype(np.uint8)
        else:
            raw = ((consts["TEST_DATA_MULTIPLIER"] * index + consts["TEST_DATA_OFFSET"])
                   & consts["BYTE_VALUE_MASK"]).astype(np.uint8)
        elems = raw.view(INT_TYPES[size]).astype(np.float64).reshape(shape)
        x = torch.from_numpy(elems)
        batched = x.dim() == 4
        y = F.unfold(x if batched else x.unsqueeze(0), kernel, dilation, padding, stride)
        y = (y if batched else y.squeeze(0)).numpy().astype(INT_TYPES[size])
        checksum = 0
        for byte in y.tobytes():
            checksum = (checksum * consts["CHECKSUM_MULTIPLIER"] + byte) % (1 << 64)
        result[name] = (y.size, checksum)
    return result


# ---- one example ------------------------------------------------------------------------------

class Row:
    def __init__(self, name, product):
        self.name, self.product = name, product
        self.built, self.status, self.checked, self.correct, self.note = False, None, 0, 0, ""


def check_printed(source_text, op, stdout):
    """(checked, correct, note) for an example's stdout."""
    if CHECKSUM_LINE.search(stdout) or RUN_CASE.search(strip_comments(source_text)):
        expected = checksum_cases(source_text)
        checked = correct = 0
        for name, count, checksum in CHECKSUM_LINE.findall(stdout):
            checked += 2
            correct += (int(count) == expected[name][0]) + (int(checksum) == expected[name][1])
        missing = sorted(set(expected) - {m[0] for m in CHECKSUM_LINE.findall(stdout)})
        return checked, correct, ("cases not printed: " + ", ".join(missing)) if missing else "checksums"
    groups = parse_output(stdout)
    if not groups:
        return 0, 0, "prints nothing checkable"
    expected = expected_outputs(source_text, op)
    checked = correct = 0
    notes = []
    for i, (name, values) in enumerate(groups):
        ref = expected[i] if i < len(expected) else None
        if ref is None:
            notes.append(f"{name} #{i}: {len(values)} values not checkable")
            continue
        n, ok, found = compare(values, ref)
        checked, correct = checked + n, correct + ok
        notes += [f"{name} #{i}: {note}" for note in found]
    return checked, correct, "; ".join(notes)


def run_example(repo, rel, prefix, work, product):
    text = repo.read(rel)
    ops = called_ops(text)
    name = f"{repo.key} {rel}"
    row = Row(name, product)
    folder = work / f"{repo.key}_{rel.replace('/', '_')[:-4]}_{product}"
    folder.mkdir(parents=True, exist_ok=True)
    source_file = folder / Path(rel).name
    source_file.write_text(text)
    exe = folder / source_file.stem
    build = subprocess.run(compile_command(repo.key, rel, source_file, exe, prefix), capture_output=True,
                           text=True)
    row.built = build.returncode == 0
    if not row.built:
        row.note = "build failed: " + (build.stderr.strip().splitlines() or ["?"])[-1][:160]
        return row
    try:
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=300,
                             env=run_env(prefix, product), cwd=folder)
    except subprocess.TimeoutExpired:
        row.status, row.note = "timeout", "did not finish in 300 s"
        return row
    row.status = run.returncode
    row.checked, row.correct, row.note = check_printed(text, ops[0], run.stdout)
    if run.returncode != 0:
        row.note = (row.note + "; " if row.note else "") + last_line(run.stdout + run.stderr)
    return row


def last_line(text):
    lines = [l for l in text.strip().splitlines() if l.strip()]
    return lines[-1][:200] if lines else ""


def table(rows):
    out = ["| example | product | build | exit | checked / correct | note |",
           "|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r.name} | {r.product} | {'ok' if r.built else 'FAILED'} | "
                   f"{'-' if r.status is None else r.status} | {r.checked} / {r.correct} | {r.note} |")
    return "\n".join(out)


def find_examples(repos):
    found = []
    for repo in repos:
        for rel in sorted(f for f in repo.files() if is_example(f)):
            if called_ops(repo.read(rel)):
                found.append((repo, rel))
    return found


def ensure_torch():
    """Re-runs the tool with the project's .venv interpreter when this one has no torch."""
    try:
        import torch  # noqa: F401
    except ImportError:
        venv = ROOT / ".venv" / "bin" / "python"
        if venv.exists() and Path(sys.prefix).resolve() != (ROOT / ".venv").resolve():
            os.execv(str(venv), [str(venv), *sys.argv])
        raise SystemExit("cann_examples: PyTorch is needed (make venv, then .venv/bin/python)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--ops-nn", required=True)
    parser.add_argument("--ops-math", required=True)
    parser.add_argument("--ops-cv", required=True)
    parser.add_argument("--lib", default=str(ROOT / "build" / "lib64" / "libaclnn.so"))
    parser.add_argument("--products", default="",
                        help="comma-separated products to run every example on, instead of each "
                             "example's own product (e.g. Ascend910B,Ascend950)")
    parser.add_argument("--keep", help="build and run in this directory and keep it")
    args = parser.parse_args()
    ensure_torch()
    repos = [Repo("ops-nn", args.ops_nn), Repo("ops-math", args.ops_math), Repo("ops-cv", args.ops_cv)]
    work = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="cann_examples_"))
    prefix = work / "cann"
    install_tree(prefix, Path(args.lib).resolve())
    rows = []
    for repo, rel in find_examples(repos):
        products = args.products.split(",") if args.products else [product_of(rel)]
        for product in products:
            rows.append(run_example(repo, rel, prefix, work, product))
            print(f"{rows[-1].name} [{product}]: build {'ok' if rows[-1].built else 'FAILED'}, "
                  f"exit {rows[-1].status}, {rows[-1].correct}/{rows[-1].checked}", file=sys.stderr)
    print(table(rows))
    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    good = all(r.built and r.status == 0 and r.correct == r.checked for r in rows)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
