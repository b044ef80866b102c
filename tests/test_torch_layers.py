"""The Python operator layers import in one direction: pyaclnn.functional and pyaclnn.nn on
pyaclnn.torch_ops, torch_ops on its registration modules and the eager lane, those on the
numpy/C path (pyaclnn._operators) and the binding's base modules, and nothing below imports
anything above - every import, module level or inside a function, read from the sources.
Before, functional, _autograd, torch_ops and _lane imported each other in a circle.
"""

import ast
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PACKAGE = os.path.join(ROOT, "pyaclnn")

# module -> its layer; a module may import only modules of lower layers (the base modules, layer
# 0, and the operator modules, layer 1, import within their own layer too)
LAYERS = {
    "pyaclnn._operators": 1,
    "pyaclnn._torch_library": 2, "pyaclnn._lane": 2,
    "pyaclnn._torch_kernels": 3,
    "pyaclnn._torch_autograd": 4, "pyaclnn._torch_vmap": 4, "pyaclnn._torch_autocast": 4,
    "pyaclnn.torch_ops": 5,
    "pyaclnn.nn": 6, "pyaclnn.functional": 6,
}


def _modules():
    """{dotted name: (path, is_package)} of every pyaclnn source."""
    found = {}
    for folder, _, files in os.walk(PACKAGE):
        for filename in files:
            if not filename.endswith(".py"):
                continue
            path = os.path.join(folder, filename)
            parts = os.path.relpath(path, ROOT)[:-3].split(os.sep)
            is_package = parts[-1] == "__init__"
            found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def _imports(name, path, is_package, modules):
    """The pyaclnn modules ``name`` imports anywhere in its source."""
    package = name if is_package else name.rsplit(".", 1)[0]
    targets = set()
    for node in ast.walk(ast.parse(open(path).read())):
        if isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(max(node.level - 1, 0)):
                base = base.rsplit(".", 1)[0]
            module = (base + ("." + node.module if node.module else "")) if node.level \
                else (node.module or "")
            for alias in node.names:
                full = module + "." + alias.name
                targets.add(full if full in modules else module)
        elif isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
    return {t for t in targets if t in modules and t != name}


def _layer(name):
    for prefix, layer in LAYERS.items():
        if name == prefix or name.startswith(prefix + "."):
            return layer
    return 0


def test_every_import_goes_down():
    modules = _modules()
    assert "pyaclnn._operators._max_pool" in modules and "pyaclnn._autograd" not in modules
    upward = []
    for name, (path, is_package) in sorted(modules.items()):
        for target in sorted(_imports(name, path, is_package, modules)):
            if target == "pyaclnn":
                continue          # the package itself (a generated module such as _cdef)
            here, there = _layer(name), _layer(target)
            if there > here or (there == here and here not in (0, 1)):
                upward.append("%s (layer %d) imports %s (layer %d)" % (name, here, target, there))
    assert upward == []


def test_the_operator_modules_do_not_import_torch():
    # the numpy/C path runs without torch: its modules import torch only where a torch
    # argument already is one (inside a function), never at module level
    for name, (path, _) in _modules().items():
        if _layer(name) != 1:
            continue
        tree = ast.parse(open(path).read())
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                assert not any(n == "torch" or n.startswith("torch.") for n in names), name
