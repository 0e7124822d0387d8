"""Typing and introspection: the installed package has py.typed and .pyi
stubs covering its public names; inspect.signature reads every public
callable; help() has a docstring for each."""
import ast
import inspect
import os

import pytest

import evrt
import evrt.accelerator
import evrt.cuda
import evrt.xpu

PKG = os.path.dirname(evrt.__file__)
MODULES = {"__init__": evrt, "cuda": evrt.cuda, "xpu": evrt.xpu,
           "accelerator": evrt.accelerator}


def stub_names(name):
    path = os.path.join(PKG, name + ".pyi")
    assert os.path.exists(path), path
    tree = ast.parse(open(path).read(), path)
    names = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names[node.name] = node
        elif isinstance(node, ast.ImportFrom):
            for a in node.names:
                names[a.asname or a.name] = node
        elif isinstance(node, (ast.AnnAssign, ast.Assign)):
            t = node.target if isinstance(node, ast.AnnAssign) else \
                node.targets[0]
            names[getattr(t, "id", "")] = node
    return names


def test_py_typed_and_stubs_are_installed():
    assert os.path.exists(os.path.join(PKG, "py.typed"))
    for name in list(MODULES) + ["_evrt"]:
        stub_names(name)


@pytest.mark.parametrize("name", sorted(MODULES))
def test_stubs_cover_the_public_names(name):
    names = stub_names(name)
    missing = [n for n in MODULES[name].__all__
               if n not in names and n != "acl"]
    assert not missing, missing


def test_stubs_cover_the_methods():
    names = stub_names("_evrt")
    for cls in ("Stream", "Event", "device"):
        body = {n.name for n in names[cls].body
                if isinstance(n, ast.FunctionDef)}
        obj = getattr(evrt, cls)
        public = [m for m in dir(obj) if not m.startswith("_")]
        missing = [m for m in public if m not in body]
        assert not missing, (cls, missing)


def public_callables():
    for modname, mod in MODULES.items():
        for n in mod.__all__:
            if n == "acl":
                continue
            obj = getattr(mod, n)
            if isinstance(obj, type) and issubclass(obj, BaseException):
                continue  # exception classes have no text signature
            if callable(obj) and not inspect.ismodule(obj):
                yield "%s.%s" % (modname, n), obj
                if isinstance(obj, type):
                    for m, f in vars(obj).items():
                        if not m.startswith("_") and callable(f):
                            yield "%s.%s.%s" % (modname, n, m), getattr(obj, m)
    for cls in (evrt.Stream, evrt.Event):
        for m in dir(cls):
            if not m.startswith("_") and callable(getattr(cls, m)):
                yield "evrt.%s.%s" % (cls.__name__, m), getattr(cls, m)


def test_signatures_and_docstrings():
    seen = 0
    for name, obj in public_callables():
        sig = inspect.signature(obj)  # raises if it cannot be read
        assert sig is not None, name
        assert obj.__doc__ and obj.__doc__.strip(), name
        seen += 1
    assert seen > 60
