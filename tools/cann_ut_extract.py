#!/usr/bin/env python3
"""Extract the status expectations of CANN's op_api unit tests for our twelve operators.

CANN's public operator repositories (hicann/ops-nn, ops-math, ops-cv) test each aclnn operator's
phase 1 with gtest cases of one shape:

    auto self = TensorDesc({1, 2, 2, 3}, ACL_BF16, ACL_FORMAT_ND);
    auto kernel = IntArrayDesc(vector<int64_t>{2, 2});
    SetPlatformNpuArch(NpuArch::DAV_3510);              // sometimes: choose the product
    auto ut = OP_API_UT(aclnnIm2col, INPUT(self, kernel, ...), OUTPUT(out));
    aclnnStatus aclRet = ut.TestGetWorkspaceSize(&workspace_size);
    EXPECT_EQ(aclRet, ACLNN_SUCCESS);

This tool reads those files from local bare mirrors of the three repositories (run by hand; CI
never needs them) and writes the facts of every call - the product the harness is on at that
point, the operator, each argument in the API's order, the expected status - to
tests/data/cann_op_api_ut.json, which tests/test_cann_op_api_ut.py replays against libaclnn.

It is a text reader for the few patterns these files use, not a C++ parser.  Anything it does not
recognise is reported (and counted in the JSON's "unparsed" list), never guessed.

What the harness does (hicann/ops-nn tests/ut/op_api/op_api_ut_common and each repository's
tests/ut/op_api/stub/opdev/platform.cpp), and therefore what a record means:
  - TensorDesc(view, dtype = FLOAT, format = NCHW, strides = {}, offset = 0, storage = {}) makes
    aclCreateTensor(view, dtype, strides or NULL (contiguous), offset, format, storage or the view
    dims, data NULL) - TensorDesc::ToAclTypeRawPtr, also for a view with a negative dim.  The default TensorDesc is {1, 1, 16, 16} FLOAT NCHW.  .ValueRange,
    .Precision and .Value only describe data (not used by phase 1); .ViewDims/.Format change it.
  - IntArrayDesc/FloatArrayDesc/BoolArrayDesc(values) make the array; ScalarDesc(v) a scalar of
    v's C++ type; nullptr, bools, ints and doubles are passed as they are.
  - OP_API_UT(api, INPUT(a...), OUTPUT(b...)) calls apiGetWorkspaceSize(a..., b..., &ws, &exec):
    INPUT then OUTPUT is the API's argument order.
  - The product is a process global.  ops-math and ops-cv tests call the free functions
    SetPlatformSocVersion / SetPlatformNpuArch, which nothing resets: the setting carries over to
    the following TESTs of the file (gtest runs a file's TESTs in order).  ops-nn only has the
    scoped SocVersionManager / NpuArchManager.  Every file starts on the harness default,
    Ascend910B (DAV_2201); a static SetUpTestCase() that sets the product applies from the
    suite's first TEST.
  - `if (GetCurrentPlatformInfo().GetSocVersion() != SocVersion::X) {...} else {...}` is decided
    here from the product the harness is on.

    python3 tools/cann_ut_extract.py [--mirrors /work/.mirror] [--out tests/data/cann_op_api_ut.json]
"""
import argparse
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (repository, path) of every op_api UT file of our operators, and the CANN package it tests.
FILES = [
    ("ops-math", "conversion/im2col/tests/ut/op_api/test_aclnn_im2col.cpp", "ops-math"),
    ("ops-math", "experimental/conversion/im2col/tests/ut/op_api/test_aclnn_im2col.cpp", "ops-math experimental"),
    ("ops-math", "conversion/pad_v3/tests/ut/op_api/test_aclnn_replication_pad2d.cpp", "ops-math"),
    ("ops-math", "conversion/pad_v3_grad_replicate/tests/ut/op_host/op_api/"
                 "test_aclnn_replication_pad2d_backward_l2.cpp", "ops-math"),
    ("ops-nn", "activation/p_relu/tests/ut/op_api/test_aclnn_prelu.cpp", "ops-nn"),
    ("ops-nn", "activation/p_relu_grad_update/tests/ut/op_host/op_api/test_aclnn_prelu_backward.cpp", "ops-nn"),
    ("ops-nn", "pooling/max_pool3d_with_argmax_v2/tests/ut/op_api/test_aclnn_max_pool2d_with_indices.cpp", "ops-nn"),
    ("ops-nn", "pooling/max_pool3d_with_argmax_v2/tests/ut/op_api/test_aclnn_max_pool2d_with_mask.cpp", "ops-nn"),
    ("ops-nn", "pooling/max_pool3d_grad_with_argmax/tests/ut/op_api/"
               "test_aclnn_max_pool2d_with_indices_backward.cpp", "ops-nn"),
    ("ops-nn", "pooling/max_pool3d_grad_with_argmax/tests/ut/op_api/"
               "test_aclnn_max_pool2d_with_mask_backward.cpp", "ops-nn"),
    ("ops-cv", "image/col2im/tests/ut/op_host/op_api/test_aclnn_im2col_backward.cpp", "ops-cv"),
    ("ops-cv", "image/upsample_nearest/tests/ut/op_host/op_api/test_aclnn_upsample_nearest_exact1d.cpp", "ops-cv"),
    ("ops-cv", "image/upsample_nearest_exact2d_grad/tests/ut/op_host/op_api/"
               "test_aclnn_upsample_nearest_exact1d_backward.cpp", "ops-cv"),
]

DEFAULT_SOC = "Ascend910B"
SOC_VERSIONS = {"ASCEND910": "Ascend910", "ASCEND910B": "Ascend910B", "ASCEND910_93": "Ascend910_93",
                "ASCEND950": "Ascend950", "ASCEND310P": "Ascend310P", "ASCEND910E": "Ascend910E",
                "ASCEND310": "Ascend310", "ASCEND310B": "Ascend310B"}
# the harness's arch -> representative SocVersion (DAV_2201 -> ASCEND910B)
NPU_ARCHS = {"DAV_1001": "Ascend910", "DAV_2201": "Ascend910B", "DAV_3510": "Ascend950",
             "DAV_2002": "Ascend310P", "DAV_3002": "Ascend310B"}

VALUE_TYPES = {"bool": "bool", "int": "int", "int64_t": "int64", "int32_t": "int", "uint64_t": "uint64",
               "double": "double", "double_t": "double", "float": "float", "float_t": "float"}


class Unparsed(Exception):
    """A construct this reader does not know; the message says which."""


def strip_comments(text):
    """The text with // and /* */ comments blanked (newlines kept, so line numbers hold)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def match_close(text, i):
    """Index of the bracket closing the one at text[i]."""
    pairs = {"(": ")", "{": "}", "[": "]"}
    stack = [pairs[text[i]]]
    j = i + 1
    while j < len(text):
        c = text[j]
        if c in pairs:
            stack.append(pairs[c])
        elif c in ")}]":
            if c != stack.pop():
                raise Unparsed("unbalanced brackets")
            if not stack:
                return j
        elif c == '"':
            j = text.index('"', j + 1)
        j += 1
    raise Unparsed("unbalanced brackets")


def split_top(text):
    """The non-empty comma-separated parts of text, splitting only outside brackets."""
    parts, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c in "({[":
            depth += 1
        elif c in ")}]":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(text[start:j])
            start = j + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def statements(body, base_line):
    """Top-level statements of a block, each a tuple ending in its line number:
    ("stmt", source, line), ("if", condition, (then_body, line), (else_body, line) or None, line),
    ("block", (body, line), line), ("loop", "for"/"while", header, (body, line), line)."""
    out, i, n = [], 0, len(body)
    while i < n:
        while i < n and body[i] in " \t\r\n;":
            i += 1
        if i >= n:
            break
        line = base_line + body.count("\n", 0, i)
        m = re.match(r"(if|for|while)\s*\(", body[i:])
        if m:
            p = i + m.end() - 1
            q = match_close(body, p)
            head = body[p + 1:q]
            k = q + 1
            while body[k] in " \t\r\n":
                k += 1
            if body[k] != "{":
                raise Unparsed("line %d: %s without braces" % (line, m.group(1)))
            e = match_close(body, k)
            blk = (body[k + 1:e], base_line + body.count("\n", 0, k + 1))
            if m.group(1) != "if":
                out.append(("loop", m.group(1), head, blk, line))
                i = e + 1
                continue
            i = e + 1
            rest = body[i:]
            mm = re.match(r"\s*else\s*\{", rest)
            other = None
            if mm:
                k2 = i + mm.end() - 1
                e2 = match_close(body, k2)
                other = (body[k2 + 1:e2], base_line + body.count("\n", 0, k2 + 1))
                i = e2 + 1
            elif re.match(r"\s*else\b", rest):
                raise Unparsed("line %d: else without braces" % line)
            out.append(("if", head, blk, other, line))
            continue
        if body[i] == "{":
            e = match_close(body, i)
            out.append(("block", (body[i + 1:e], line), line))
            i = e + 1
            continue
        # a plain statement: up to the next top-level ';'
        depth, j = 0, i
        while j < n:
            c = body[j]
            if c in "({[":
                depth += 1
            elif c in ")}]":
                depth -= 1
            elif c == ";" and depth == 0:
                break
            j += 1
        out.append(("stmt", " ".join(body[i:j].split()), line))
        i = j + 1
    return out


# ---- expressions ----------------------------------------------------------------------------

INT_RE = re.compile(r"^[-+]?(0x[0-9a-fA-F]+|\d+)(?:[uU]?[lL]{0,2}[uU]?)$")
FLOAT_RE = re.compile(r"^[-+]?(\d+\.\d*|\.\d+|\d+)([eE][-+]?\d+)?[fF]?$")


class Interp:
    """Evaluates the statements of one TEST body."""

    def __init__(self, ctx):
        self.ctx = ctx          # the file's state: product, status codes, records
        self.env = {}           # variable -> value
        self.pending = {}       # status variable -> record waiting for its assertion
        self.scoped_soc = None  # a SocVersionManager in this TEST (restored at its end)

    # values: ("tensor", dict) ("null",) ("int_array", [..]) ("float_array", [..])
    #         ("bool_array", [..]) ("scalar", dtype, value) ("value", ctype, v) ("vec", [..])
    #         ("enum", NAME) ("ut", dict) ("status", record)
    def eval(self, src):
        src = src.strip()
        while src.startswith("(") and match_close(src, 0) == len(src) - 1:
            src = src[1:-1].strip()
        if re.match(r"^(\(\s*(const\s+)?acl\w+\s*\*\s*\)\s*)?(nullptr|NULL)$", src):
            return ("null",)
        if src in ("true", "false"):
            return ("value", "bool", src == "true")
        if INT_RE.match(src):
            return ("value", "int64" if re.search(r"[lL]$", src) else "int", int(re.sub(r"[uUlL]+$", "", src), 0))
        if FLOAT_RE.match(src):
            return ("value", "float" if src[-1] in "fF" else "double", float(src.rstrip("fF")))
        if re.match(r"^(std::)?[A-Za-z_]\w*$", src) and src in self.env:
            return self.env[src]
        m = re.match(r"^(?:op::)?(ACL_\w+|ACLNN_\w+)$", src)
        if m:
            return ("enum", m.group(1))
        m = re.match(r"^(?:std::)?vector<\s*(int64_t|aclDataType|bool|float)\s*>\s*(\{.*\})$", src)
        if m:
            return self.eval(m.group(2))
        if src.startswith("{") and match_close(src, 0) == len(src) - 1:
            return ("vec", [self.scalar_of(self.eval(p)) for p in split_top(src[1:-1])])
        m = re.match(r"^(\w+)\[(.+)\]$", src)
        if m and m.group(1) in self.env and self.env[m.group(1)][0] == "vec":
            idx = self.scalar_of(self.eval(m.group(2)))
            return self.lift(self.env[m.group(1)][1][idx])
        m = re.match(r"^(?:std::)?vector<\s*(int64_t|aclDataType|bool|float)\s*>\s*\((.*)\)$", src)
        if m:
            args = split_top(m.group(2))
            if len(args) == 1 and self.eval(args[0])[0] == "vec":
                return self.eval(args[0])
            if len(args) == 2:
                return ("vec", [self.scalar_of(self.eval(args[1]))] * self.scalar_of(self.eval(args[0])))
            raise Unparsed("vector constructor %r" % src)
        # a call, possibly with a chain of method calls
        m = re.match(r"^([A-Za-z_][\w:]*)\s*\(", src)
        if m:
            q = match_close(src, m.end() - 1)
            value = self.call(m.group(1), src[m.end():q])
            return self.chain(value, src[q + 1:].strip(), src)
        m = re.match(r"^([A-Za-z_]\w*)\s*\.", src)
        if m and m.group(1) in self.env:
            return self.chain(self.env[m.group(1)], src[m.end() - 1:], src)
        raise Unparsed("expression %r" % src)

    @staticmethod
    def lift(v):
        if isinstance(v, bool):
            return ("value", "bool", v)
        if isinstance(v, int):
            return ("value", "int", v)
        if isinstance(v, float):
            return ("value", "double", v)
        if isinstance(v, str):
            return ("enum", v)
        raise Unparsed("element %r" % (v,))

    @staticmethod
    def scalar_of(v):
        if v[0] == "value":
            return v[2]
        if v[0] == "enum":
            return v[1]
        raise Unparsed("not a plain value: %r" % (v,))

    def vec_of(self, src):
        v = self.eval(src)
        if v[0] != "vec":
            raise Unparsed("not a list: %r" % src)
        return v[1]

    def call(self, name, argsrc):
        args = split_top(argsrc)
        name = re.sub(r"^(op|std)::", "", name)
        if name == "TensorDesc":
            t = {"shape": [1, 1, 16, 16], "dtype": "ACL_FLOAT", "format": "ACL_FORMAT_NCHW",
                 "strides": None, "offset": 0, "storage_shape": None}
            if len(args) > 6:
                raise Unparsed("TensorDesc with %d arguments" % len(args))
            keys = ["shape", "dtype", "format", "strides", "offset", "storage_shape"]
            for key, a in zip(keys, args):
                v = self.eval(a)
                if key in ("shape", "strides", "storage_shape"):
                    if v[0] != "vec":
                        raise Unparsed("TensorDesc %s %r" % (key, a))
                    t[key] = list(v[1]) if (v[1] or key == "shape") else None
                elif key in ("dtype", "format"):
                    if v[0] != "enum":
                        raise Unparsed("TensorDesc %s %r" % (key, a))
                    t[key] = v[1]
                else:
                    t[key] = self.scalar_of(v)
            return ("tensor", t)
        m = re.match(r"^(Int|Float|Bool)ArrayDesc$", name)
        if m:
            kind = m.group(1).lower() + "_array"
            if len(args) == 1:
                return (kind, list(self.vec_of(args[0])))
            if len(args) == 2:
                return (kind, [self.scalar_of(self.eval(args[1]))] * self.scalar_of(self.eval(args[0])))
            raise Unparsed("%s with %d arguments" % (name, len(args)))
        if name == "ScalarDesc":
            if len(args) == 1:
                v = self.eval(args[0])
                if v[0] != "value":
                    raise Unparsed("ScalarDesc(%s)" % argsrc)
                dtype = {"bool": "ACL_BOOL", "int": "ACL_INT32", "int64": "ACL_INT64", "float": "ACL_FLOAT",
                         "double": "ACL_DOUBLE", "uint64": "ACL_UINT64"}[v[1]]
                return ("scalar", dtype, v[2])
            if len(args) == 2:
                v, dt = self.eval(args[0]), self.eval(args[1])
                return ("scalar", dt[1], v[2])
            raise Unparsed("ScalarDesc(%s)" % argsrc)
        if name in VALUE_TYPES:  # a functional cast: int64_t(3), double(0)
            v = self.eval(argsrc)
            return ("value", VALUE_TYPES[name], v[2])
        if name == "OP_API_UT":
            api = args[0]
            ins, outs, extra = None, None, []
            for a in args[1:]:
                mm = re.match(r"^(INPUT|OUTPUT)\s*\((.*)\)$", a, re.S)
                if mm and mm.group(1) == "INPUT":
                    ins = [self.eval(x) for x in split_top(mm.group(2))]
                elif mm:
                    outs = [self.eval(x) for x in split_top(mm.group(2))]
                else:
                    extra.append(self.eval(a))
            if ins is None or outs is None:
                raise Unparsed("OP_API_UT without INPUT/OUTPUT")
            return ("ut", {"api": api, "args": ins + outs + extra})
        raise Unparsed("call %s(...)" % name)

    def chain(self, value, rest, whole):
        while rest:
            m = re.match(r"^\.\s*(\w+)\s*\(", rest)
            if not m:
                raise Unparsed("expression %r" % whole)
            q = match_close(rest, m.end() - 1)
            meth, argsrc = m.group(1), rest[m.end():q]
            rest = rest[q + 1:].strip()
            if value[0] == "tensor" and meth in ("ValueRange", "Precision", "Value", "ValueFile", "ValidCount"):
                continue  # data and precision only: phase 1 never sees them
            if value[0] == "tensor" and meth == "ViewDims":
                value = ("tensor", dict(value[1], shape=list(self.vec_of(argsrc))))
                continue
            if value[0] == "tensor" and meth == "Format":
                value = ("tensor", dict(value[1], format=self.eval(argsrc)[1]))
                continue
            if value[0] == "ut" and meth == "TestGetWorkspaceSize":
                value = ("status", self.ctx.new_record(value[1]))
                continue
            if value[0] == "vec" and meth == "size" and not argsrc.strip():
                value = ("value", "int", len(value[1]))
                continue
            if value[0] == "ut" and meth == "TestPrecision":
                value = ("none",)
                continue
            raise Unparsed("method .%s on %s" % (meth, value[0]))
        return value

    # ---- statements --------------------------------------------------------------------------
    def run(self, stmts):
        for st in stmts:
            self.ctx.line = st[-1]
            if st[0] == "stmt":
                self.stmt(st[1])
            elif st[0] == "block":
                self.run(statements(st[1][0], st[1][1]))
            elif st[0] == "if":
                self.branch(st)
            else:
                raise Unparsed("line %d: %s loop" % (st[-1], st[1]))

    def branch(self, st):
        _, cond, then_blk, else_blk, line = st
        m = re.match(r"^\s*GetCurrentPlatformInfo\(\)\s*\.\s*GetSocVersion\(\)\s*(==|!=)\s*(?:op::)?SocVersion::(\w+)\s*$",
                     cond)
        if not m:
            raise Unparsed("line %d: condition %r" % (line, cond))
        if m.group(2) not in SOC_VERSIONS:
            raise Unparsed("line %d: SocVersion::%s" % (line, m.group(2)))
        equal = self.ctx.soc == SOC_VERSIONS[m.group(2)]
        taken = then_blk if equal == (m.group(1) == "==") else else_blk
        self.ctx.conditional = True
        if taken is not None:
            self.run(statements(taken[0], taken[1]))
        self.ctx.conditional = False

    def stmt(self, s):
        line = self.ctx.line
        if re.match(r"^(std::)?cout\b", s):
            return
        m = re.match(r"^(?:op::)?(SetPlatformSocVersion|SetPlatformNpuArch)\s*\(\s*(?:op::)?(SocVersion|NpuArch)::(\w+)\s*\)$", s)
        if m:
            self.ctx.set_platform(m.group(2), m.group(3))
            return
        m = re.match(r"^(?:op::)?(SocVersionManager|NpuArchManager)\s+\w+\s*\(\s*(?:op::)?(SocVersion|NpuArch)::(\w+)\s*\)$", s)
        if m:
            if self.scoped_soc is None:
                self.scoped_soc = (self.ctx.soc, self.ctx.soc_origin, self.ctx.soc_set_in)
            self.ctx.set_platform(m.group(2), m.group(3))
            return
        m = re.match(r"^(EXPECT|ASSERT)_(EQ|NE)\s*\((.*)\)$", s)
        if m:
            a, b = split_top(m.group(3))
            self.expect(m.group(1), m.group(2), a, b)
            return
        m = re.match(r"^(?:const\s+)?(?:static\s+)?(auto|(?:std::)?vector<\s*\w+\s*>|bool|int|int64_t|int32_t|uint64_t|"
                     r"double|double_t|float|float_t|aclnnStatus|aclDataType)\s+(\w+)\s*=\s*(.+)$", s)
        if not m:
            m = re.match(r"^()(\w+)\s*=\s*(.+)$", s)
        if m:
            ctype, name, expr = m.groups()
            value = self.eval(expr)
            if ctype in VALUE_TYPES and value[0] == "value":
                value = ("value", VALUE_TYPES[ctype], value[2])
            if value[0] == "status":
                self.bind_status(name, value[1])
            self.env[name] = value
            return
        m = re.match(r"^(?:std::)?vector<\s*\w+\s*>\s+(\w+)\s*(\{.*\})$", s)
        if m:
            self.env[m.group(1)] = self.eval(m.group(2))
            return
        m = re.match(r"^(\w+)\s*\.\s*(ViewDims|Format)\s*\((.*)\)$", s)
        if m and m.group(1) in self.env:
            self.env[m.group(1)] = self.chain(self.env[m.group(1)], s[len(m.group(1)):], s)
            return
        if re.match(r"^(\w+)\s*\.\s*(TestGetWorkspaceSize|TestPrecision)\s*\((.*)\)$", s):
            self.eval(s)  # a status nobody looks at: its record stays without an assertion
            return
        raise Unparsed("line %d: statement %r" % (line, s))

    def bind_status(self, name, record):
        # a status variable assigned again before any assertion leaves its record unasserted
        self.pending[name] = record

    def expect(self, macro, op, a, b):
        rec = None
        for side, other in ((a, b), (b, a)):
            if re.match(r"^\w+$", side) and side in self.pending:
                rec, code_src = self.pending.pop(side), other
                break
            if "TestGetWorkspaceSize" in side:
                v = self.eval(side)
                if v[0] == "status":
                    rec, code_src = v[1], other
                    break
        if rec is None:
            raise Unparsed("line %d: assertion %s_%s(%s, %s) on no phase-1 status" % (self.ctx.line, macro, op, a, b))
        code = self.eval(code_src)
        if code[0] != "enum" or code[1] not in self.ctx.codes:
            raise Unparsed("line %d: status %r" % (self.ctx.line, code_src))
        rec["expect"] = {"status": code[1], "code": self.ctx.codes[code[1]], "not_equal": op == "NE",
                         "macro": "%s_%s" % (macro, op), "line": self.ctx.line,
                         "conditional_on_soc": self.ctx.conditional}

    def finish(self):
        if self.scoped_soc is not None:
            self.ctx.soc, self.ctx.soc_origin, self.ctx.soc_set_in = self.scoped_soc


# ---- files ----------------------------------------------------------------------------------

def arg_record(v):
    kind = v[0]
    if kind == "tensor":
        t = v[1]
        return {"kind": "tensor", "shape": t["shape"], "dtype": t["dtype"], "format": t["format"],
                "strides": t["strides"], "offset": t["offset"], "storage_shape": t["storage_shape"]}
    if kind == "null":
        return {"kind": "null"}
    if kind in ("int_array", "float_array", "bool_array"):
        return {"kind": kind, "values": v[1]}
    if kind == "scalar":
        return {"kind": "scalar", "dtype": v[1], "value": v[2]}
    if kind == "value":
        return {"kind": v[1], "value": v[2]}
    raise Unparsed("argument of kind %s" % kind)


class FileContext:
    """The harness state while one file's TESTs run in order, and what was found in it."""

    def __init__(self, repo, path, commit, package, codes):
        self.repo, self.path, self.commit, self.package, self.codes = repo, path, commit, package, codes
        self.soc = DEFAULT_SOC
        self.soc_origin = "the harness default"
        self.soc_set_in = None  # where the product was last set: "TEST x", "Suite::SetUpTestCase"
        self.pending_records = []  # every call of the file, asserted or not
        self.records, self.unparsed, self.no_assertion = [], [], []
        self.suite = self.test = self.where = None  # where = "TEST x" or "Suite::SetUpTestCase"
        self.test_line = self.line = 0
        self.conditional = False  # inside an if on the product

    def set_platform(self, kind, name):
        table = SOC_VERSIONS if kind == "SocVersion" else NPU_ARCHS
        if name not in table:
            raise Unparsed("line %d: %s::%s" % (self.line, kind, name))
        self.soc = table[name]
        self.soc_set_in = self.where
        self.soc_origin = "%s(%s::%s) in %s, line %d" % (
            "SetPlatformSocVersion" if kind == "SocVersion" else "SetPlatformNpuArch", kind, name,
            self.where, self.line)

    def new_record(self, ut):
        api = ut["api"]
        if not api.startswith("aclnn"):
            raise Unparsed("line %d: api %r" % (self.line, api))
        n = sum(1 for r in self.pending_records if r["test"] == self.test) + 1
        rec = {"id": None, "repo": "hicann/" + self.repo, "path": self.path, "commit": self.commit,
               "package": self.package, "suite": self.suite, "test": self.test, "call": n,
               "line": self.line, "test_line": self.test_line, "soc": self.soc, "soc_set_by": self.soc_origin,
               # a TEST run alone (--gtest_filter) starts on the default instead of a product an
               # earlier TEST left behind
               "soc_if_run_alone": self.soc if self.soc_set_in in (None, self.where,
                                                                   "%s::SetUpTestCase" % self.suite) else DEFAULT_SOC,
               "operator": api[len("aclnn"):], "args": [arg_record(a) for a in ut["args"]], "expect": None}
        self.pending_records.append(rec)
        return rec


def parse_file(ctx, text):
    clean = strip_comments(text)
    # static SetUpTestCase() { SetPlatformSocVersion(...); } of a fixture: applies from the suite's first TEST
    setups = {}
    for m in re.finditer(r"class\s+(\w+)\s*:\s*public\s+(?:testing|::testing)::Test\s*\{", clean):
        end = match_close(clean, m.end() - 1)
        body = clean[m.end():end]
        mm = re.search(r"SetUpTestCase\s*\(\s*\)\s*\{", body)
        if mm:
            e = match_close(body, mm.end() - 1)
            setups[m.group(1)] = (body[mm.end():e], clean.count("\n", 0, m.end() + mm.end()) + 1)
    started = set()
    for m in re.finditer(r"^\s*TEST(_F)?\s*\(\s*(\w+)\s*,\s*(\w+)\s*\)\s*\{", clean, re.M):
        suite, test = m.group(2), m.group(3)
        line = clean.count("\n", 0, m.start(2)) + 1
        ctx.suite, ctx.test, ctx.test_line = suite, test, line
        before = len(ctx.pending_records)
        try:
            interp = Interp(ctx)
            if suite in setups and suite not in started:
                ctx.line, ctx.where = setups[suite][1], "%s::SetUpTestCase" % suite
                for st in statements(setups[suite][0], setups[suite][1]):
                    if st[0] == "stmt" and re.match(r"^(std::)?cout\b", st[1]):
                        continue
                    interp.stmt(st[1])
            started.add(suite)
            ctx.where = "TEST " + test
            end = match_close(clean, m.end() - 1)
            body = clean[m.end():end]
            interp.run(statements(body, clean.count("\n", 0, m.end()) + 1))
            interp.finish()
        except Unparsed as err:
            del ctx.pending_records[before:]
            ctx.unparsed.append({"repo": "hicann/" + ctx.repo, "path": ctx.path, "test": test, "line": line,
                                 "reason": str(err)})
            continue
        for rec in ctx.pending_records[before:]:
            if rec["expect"] is None:
                ctx.no_assertion.append({"repo": "hicann/" + ctx.repo, "path": ctx.path, "test": test,
                                         "line": rec["line"], "reason": "no assertion on this call's status"})
            else:
                ctx.records.append(rec)
    tests = len(re.findall(r"^\s*TEST(_F)?\s*\(", clean, re.M))
    return tests


def dump(doc):
    """JSON with one line per source, case and finding, so that a re-extraction diffs by case."""
    lines = ["{"]
    keys = list(doc)
    for k, key in enumerate(keys):
        tail = "," if k < len(keys) - 1 else ""
        value = doc[key]
        if isinstance(value, list):
            items = [" " + json.dumps(v, separators=(", ", ": ")) for v in value]
            lines.append(" %s: [" % json.dumps(key))
            lines += [item + ("," if i < len(items) - 1 else "") for i, item in enumerate(items)]
            lines.append(" ]" + tail)
        else:
            lines.append(" %s: %s%s" % (json.dumps(key), json.dumps(value), tail))
    return "\n".join(lines + ["}"]) + "\n"


def status_codes():
    codes = {"ACL_SUCCESS": 0}
    with open(os.path.join(ROOT, "libaclnn", "include", "aclnn", "opdev", "op_errno.h")) as f:
        for m in re.finditer(r"#define\s+(ACLNN_\w+)\s+(\d+)", f.read()):
            codes[m.group(1)] = int(m.group(2))
    return codes


def git(mirror, *args):
    return subprocess.run(["git", "-C", mirror] + list(args), check=True, capture_output=True,
                          text=True).stdout


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mirrors", default="/work/.mirror",
                    help="folder holding hicann+ops-nn/repo, hicann+ops-math/repo, hicann+ops-cv/repo")
    ap.add_argument("--out", default=os.path.join(ROOT, "tests", "data", "cann_op_api_ut.json"))
    opts = ap.parse_args()
    codes = status_codes()
    records, unparsed, no_assertion, sources = [], [], [], []
    for repo, path, package in FILES:
        mirror = os.path.join(opts.mirrors, "hicann+" + repo, "repo")
        commit = git(mirror, "log", "-1", "--format=%H").strip()
        text = git(mirror, "show", "%s:%s" % (commit, path))
        ctx = FileContext(repo, path, commit, package, codes)
        tests = parse_file(ctx, text)
        for rec in ctx.records:
            calls = sum(1 for r in ctx.pending_records if r["test"] == rec["test"])
            rec["id"] = "%s.%s%s" % (rec["suite"], rec["test"], "#%d" % rec["call"] if calls > 1 else "")
        records += ctx.records
        unparsed += ctx.unparsed
        no_assertion += ctx.no_assertion
        sources.append({"repo": "hicann/" + repo, "path": path, "commit": commit, "tests": tests,
                        "calls": len(ctx.records)})
        print("%-8s %-95s %3d TESTs, %3d calls, %d unparsed, %d without assertion" % (
            repo, path, tests, len(ctx.records), len(ctx.unparsed), len(ctx.no_assertion)), file=sys.stderr)
    ids = [r["id"] for r in records]
    dup = {i for i in ids if ids.count(i) > 1}
    if dup:
        sys.exit("duplicate case ids: %s" % sorted(dup))
    for r in records:
        del r["suite"], r["call"]
    doc = {
        "about": "Status expectations of CANN's op_api unit tests (hicann/ops-nn, ops-math, ops-cv) for the "
                 "twelve operators, one record per GetWorkspaceSize call, written by tools/cann_ut_extract.py. "
                 "Facts only: the product the harness is on, each argument in the API's order, the expected "
                 "status. A tensor's null strides / storage_shape are what the harness leaves out: "
                 "TensorDesc::ToAclTypeRawPtr then passes NULL strides and the view dims as storage dims. "
                 "Replayed by tests/test_cann_op_api_ut.py.",
        "sources": sources,
        "cases": records,
        "unparsed": unparsed,
        "no_assertion": no_assertion,
    }
    os.makedirs(os.path.dirname(opts.out), exist_ok=True)
    with open(opts.out, "w") as f:
        f.write(dump(doc))
    print("%d cases, %d TESTs or calls unparsed, %d calls without an assertion -> %s" % (
        len(records), len(unparsed), len(no_assertion), os.path.relpath(opts.out, ROOT)), file=sys.stderr)
    for u in unparsed:
        print("  unparsed: %(repo)s %(path)s %(test)s (line %(line)d): %(reason)s" % u, file=sys.stderr)
    for u in no_assertion:
        print("  no assertion: %(repo)s %(path)s %(test)s (line %(line)d)" % u, file=sys.stderr)


if __name__ == "__main__":
    main()
