#!/usr/bin/env python3
"""The closed ABI of a shared library, checked three ways.

    abi_check.py --lib LIB.so --map FILE.map --macro EXPORT_MACRO
                 --prefix NAME_PREFIX --header H [--header H ...] [--tags]

1. `nm -D --defined-only LIB.so` against the version script (the checked-in
   list): every exported symbol, with its version node, is listed, and every
   listed one is exported.
2. The headers against the version script: every function declared with
   EXPORT_MACRO is listed, and every listed one is declared.
3. With --tags, every declaration carries the tag line of include/evrt.h's
   legend just above it.
4. With --no-symtab PREFIX, no symbol of that prefix is even compiled in
   (the full symbol table, local symbols included): test hooks stay out.

Each mismatch is one line naming the symbol, the file to fix and what to
add or remove; the exit status is 1 if there is any.  Debian's python3 only
(re, subprocess).
"""
import argparse
import re
import subprocess
import sys

# The tag line of include/evrt.h (its legend explains them): thread safety,
# blocking, host functions, in this order.
TAG_LINE = re.compile(r"^\s*/\* \[!?ts\] \[(?:nb|blocks)\] \[(?:hostfn\*?|!hostfn)\] \*/\s*$")


def strip_c_comments(text):
    # Keep the line structure so that line numbers stay right.
    return re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text,
                  flags=re.S)


def parse_map(path):
    """{name: node or None} of the global entries, and the newest node."""
    text = strip_c_comments(open(path).read())
    text = re.sub(r"#[^\n]*", "", text)
    entries, problems, newest = {}, [], None
    for m in re.finditer(r"([A-Za-z_][\w.]*)?\s*\{(.*?)\}\s*([\w.]*)\s*;", text, re.S):
        node = m.group(1)
        newest = node or newest
        section = None
        for tok in re.findall(r"[^\s;]+:|[^\s;]+", m.group(2)):
            if tok in ("global:", "local:"):
                section = tok
                continue
            if section != "global:":
                continue
            if any(c in tok for c in "*?["):
                problems.append("%s: wildcard '%s' in node %s's global list: "
                                "list each symbol by name" % (path, tok, node or "{}"))
                continue
            if tok in entries:
                problems.append("%s: %s listed twice" % (path, tok))
            entries[tok] = node
    if not entries:
        problems.append("%s: no global symbol found" % path)
    return entries, newest, problems


def exported(lib):
    """{name: node or None} of nm -D --defined-only, version definitions
    (type A) left out."""
    out = subprocess.run(["nm", "-D", "--defined-only", lib], check=True,
                         capture_output=True, text=True).stdout
    syms = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 3 or parts[1] == "A":
            continue
        name, _, node = parts[2].partition("@")
        syms[name] = node.lstrip("@") or None
    return syms


def declared(headers, macro, prefix, tags):
    """{name: header} of the functions declared with macro, and the
    declarations that lack a tag line (with --tags)."""
    names, untagged = {}, []
    decl = re.compile(r"\b%s\b[^;{}()]*?\b(%s\w*)\s*\(" % (re.escape(macro), re.escape(prefix)))
    for h in headers:
        raw = open(h).read()
        lines = raw.split("\n")
        text = strip_c_comments(raw)
        text = re.sub(r"^\s*#(?:[^\n]*\\\n)*[^\n]*", lambda m: "\n" * m.group(0).count("\n"),
                      text, flags=re.M)
        for m in decl.finditer(text):
            names[m.group(1)] = h
            if tags:
                lineno = text.count("\n", 0, m.start())  # 0-based line of the macro
                above = lines[lineno - 1] if lineno else ""
                if not TAG_LINE.match(above):
                    untagged.append((m.group(1), h, lineno + 1, above.strip()))
    return names, untagged


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lib", required=True)
    ap.add_argument("--map", required=True)
    ap.add_argument("--macro", required=True)
    ap.add_argument("--prefix", required=True)
    ap.add_argument("--header", action="append", required=True)
    ap.add_argument("--tags", action="store_true")
    ap.add_argument("--no-symtab", action="append", default=[])
    a = ap.parse_args()

    listed, newest, errors = parse_map(a.map)
    node_txt = ("node %s" % newest) if newest else "its global list"
    at = lambda name, node: name + ("@@" + node if node else "")

    syms = exported(a.lib)
    for name in sorted(set(syms) - set(listed)):
        errors.append("%s: exported by %s but not listed in %s: add '%s;' to "
                      "%s, or make it static/hidden" % (at(name, syms[name]), a.lib,
                                                        a.map, name, node_txt))
    for name in sorted(set(listed) - set(syms)):
        errors.append("%s: listed in %s but not exported by %s: is it "
                      "defined, and declared with %s?" % (at(name, listed[name]), a.map,
                                                          a.lib, a.macro))
    for name in sorted(set(listed) & set(syms)):
        if listed[name] != syms[name]:
            errors.append("%s: exported as %s, but %s lists it in %s" % (
                name, at(name, syms[name]), a.map, listed[name] or "no node"))

    decls, untagged = declared(a.header, a.macro, a.prefix, a.tags)
    for name in sorted(set(decls) - set(listed)):
        errors.append("%s: declared with %s in %s but not listed in %s: add "
                      "'%s;' to %s" % (name, a.macro, decls[name], a.map, name, node_txt))
    for name in sorted(set(listed) - set(decls)):
        errors.append("%s: listed in %s but declared with %s in none of %s" % (
            name, a.map, a.macro, ", ".join(a.header)))
    for name, h, line, above in untagged:
        errors.append("%s: %s:%d: the line above its declaration must be its "
                      "tag line, e.g. '/* [ts] [nb] [hostfn] */' (legend at the "
                      "top of the header); found '%s'" % (name, h, line, above))

    if a.no_symtab:
        out = subprocess.run(["nm", a.lib], capture_output=True, text=True).stdout
        for line in out.splitlines():
            name = line.split()[-1]
            if name.startswith(tuple(a.no_symtab)):
                errors.append("%s: compiled into %s (test-only code belongs in "
                              "the static test build)" % (name, a.lib))

    for e in errors:
        print("ABI: " + e)
    if errors:
        print("ABI check FAILED for %s: %d problem(s)" % (a.lib, len(errors)))
        return 1
    print("ABI check OK: %s exports exactly the %d symbols of %s, all declared "
          "in the headers" % (a.lib, len(listed), a.map))
    return 0


if __name__ == "__main__":
    sys.exit(main())
