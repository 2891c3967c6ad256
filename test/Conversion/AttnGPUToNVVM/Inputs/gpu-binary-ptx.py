"""Prints the PTX of every gpu.binary object in the MLIR read from stdin
(the `assembly` of `--attngpu-lower-to-ptx`, whose text MLIR escapes as
\\XX hex bytes), so that tests can check it line by line and ptxas it."""
import re
import sys

text = sys.stdin.read()
objects = re.findall(r'assembly = "((?:[^"\\]|\\.)*)"', text)
if not objects:
    sys.exit("gpu-binary-ptx: no gpu.binary object with an assembly")
for escaped in objects:
    sys.stdout.write(re.sub(r"\\([0-9A-Fa-f]{2})",
                            lambda m: chr(int(m.group(1), 16)), escaped))
