"""Packs a built attn-mlir into a wheel, and the PEP 517 backend of
pyproject.toml (`pip install .`).

    scripts/wheel                      # what scripts/test runs ($BUILD_DIR)
    python3 scripts/attn_wheel.py --build-dir build --out dist

The wheel, dist/attn_mlir-<version>-py3-none-<platform>.whl, holds:
  attn_mlir/*.py               the package (ctypes: one wheel for every Python 3)
  attn_mlir/lib/libattn.so.0   the library as built (stripped), RUNPATH $ORIGIN
  attn_mlir/lib/lib*-<hash>.so.N  every shared library it loads that is not
                               glibc, libstdc++ or libgcc_s (libLLVM, libz3,
                               libxml2, libicu, ...), copied, stripped and
                               renamed with a hash of their contents (as
                               auditwheel does: another copy of the same
                               library in the process, say torch's libz, is
                               never taken for ours nor ours for it)
  attn_mlir/bin/attn-run, attn-opt  the tools, RUNPATH $ORIGIN/../lib, and
                               console scripts of the same names
so that it needs nothing but glibc, libstdc++ and (for GPU runs) the NVIDIA
driver, which libattn opens with dlopen. The version is the build's
(include/attn/Version.h, from CMake's project VERSION); the platform tag is
manylinux_2_<N>_x86_64 where N is the highest GLIBC symbol version any
packed file needs. Nothing is compiled here: the build directory must be
built (scripts/wheel does that first; the backend does it for `pip install`).
Needs patchelf, strip, objdump and ldd.
"""

import argparse
import base64
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
NAME = "attn_mlir"
# What the installed wheel may take from the system (the manylinux policy's
# C and C++ runtime); everything else that ldd shows is packed.
SYSTEM_LIBS = re.compile(
    r"^(linux-vdso\.so|ld-linux[-\w]*\.so|libc\.so|libm\.so|libdl\.so|"
    r"libpthread\.so|librt\.so|libutil\.so|libresolv\.so|libstdc\+\+\.so|"
    r"libgcc_s\.so)")
TOOLS = ("attn-run", "attn-opt")


def log(message):
    print(f"attn_wheel: {message}", file=sys.stderr)


def run(*args):
    return subprocess.run(args, check=True, capture_output=True,
                          text=True).stdout


def build_version(build_dir):
    path = os.path.join(build_dir, "include", "attn", "Version.h")
    with open(path) as f:
        match = re.search(r'#define ATTN_VERSION_STRING "([^"]+)"', f.read())
    if not match:
        raise SystemExit(f"attn_wheel: no ATTN_VERSION_STRING in {path}")
    return match.group(1)


def shared_deps(path):
    """(soname, resolved path) of every library ldd shows for `path`,
    failing on one it cannot find."""
    deps = []
    for line in run("ldd", path).splitlines():
        line = line.strip()
        if "=> not found" in line:
            raise SystemExit(f"attn_wheel: {path}: {line}")
        match = re.match(r"(\S+) => (/\S+)", line)
        if match:
            deps.append((match.group(1), match.group(2)))
    return deps


def glibc_minor(paths):
    """The highest GLIBC_2.N symbol version the files need."""
    highest = 17
    for path in paths:
        for minor in re.findall(r"GLIBC_2\.(\d+)", run("objdump", "-T", path)):
            highest = max(highest, int(minor))
    return highest


def hashed_name(soname, path):
    """libz.so.1 -> libz-1a2b3c4d.so.1 (auditwheel's scheme)."""
    with open(path, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:8]
    base, sep, rest = soname.partition(".so")
    return f"{base}-{digest}{sep}{rest}"


def stage(build_dir, dest):
    """Lays out the package under `dest`; returns the ELF files packed."""
    pkg = os.path.join(dest, NAME)
    libdir = os.path.join(pkg, "lib")
    bindir = os.path.join(pkg, "bin")
    os.makedirs(libdir)
    os.makedirs(bindir)
    src = os.path.join(ROOT, "python", NAME)
    for name in sorted(os.listdir(src)):
        if name.endswith(".py"):
            shutil.copy(os.path.join(src, name), pkg)

    library = os.path.join(build_dir, "lib", "libattn.so")
    if not os.path.isfile(library):
        raise SystemExit(f"attn_wheel: {library} is not built")
    soname = os.path.basename(run("readelf", "-d", library).split(
        "Library soname: [")[1].split("]")[0])
    elfs = {soname: os.path.join(libdir, soname)}
    shutil.copy(os.path.realpath(library), elfs[soname])
    for tool in TOOLS:
        elfs[tool] = os.path.join(bindir, tool)
        shutil.copy(os.path.join(build_dir, "bin", tool), elfs[tool])

    renames = {}
    for dep, path in shared_deps(library):
        if SYSTEM_LIBS.match(dep) or dep == soname:
            continue
        renames[dep] = hashed_name(dep, path)
        elfs[dep] = os.path.join(libdir, renames[dep])
        shutil.copy(path, elfs[dep])
    for dep, path in elfs.items():
        os.chmod(path, 0o755)
        run("strip", "--strip-unneeded", path)
        # One change per call: patchelf 0.14 (Debian 12's) mixes them up
        # otherwise (.gnu.version_r keeps the old file names, the SONAME
        # gets the RUNPATH's string). Checked below.
        needed = re.findall(r"\(NEEDED\).*\[(.+)\]", run("readelf", "-d", path))
        args = []
        for old in needed:
            if old in renames:
                args += ["--replace-needed", old, renames[old]]
        if args:
            run("patchelf", *args, path)
        if dep in renames:
            run("patchelf", "--set-soname", renames[dep], path)
        origin = "$ORIGIN/../lib" if dep in TOOLS else "$ORIGIN"
        run("patchelf", "--set-rpath", origin, path)
        dynamic = run("readelf", "-d", path)
        if f"runpath: [{origin}]" not in dynamic or (
                dep in renames and f"soname: [{renames[dep]}]" not in dynamic):
            raise SystemExit(f"attn_wheel: patchelf failed on {path}")
    # Every file now finds what it needs in the package or the C/C++ runtime.
    for path in elfs.values():
        for dep, where in shared_deps(path):
            inside = os.path.dirname(os.path.realpath(where)) == libdir
            if not inside and not SYSTEM_LIBS.match(dep):
                raise SystemExit(f"attn_wheel: {path} still loads {where}")
    return sorted(elfs.values())


def record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest())
    return f"{arcname},sha256={digest.rstrip(b'=').decode()},{len(data)}"


def tree_files(tree):
    """The files under `tree` in the wheel's order: sorted by path, the
    package first, RECORD last."""
    names = []
    for top, dirs, files in os.walk(tree):
        names += [os.path.relpath(os.path.join(top, f), tree) for f in files]
    return sorted(names, key=lambda n: (n.endswith(".dist-info/RECORD"),
                                        ".dist-info/" in n, n))


def zip_tree(tree, wheel):
    """Writes the wheel from its unpacked tree, deterministically (fixed
    dates, order and compression), so that the same tree gives the same
    bytes: scripts/gpu-wheel carries the tree (xz packs it under the device
    machine's 64 MiB) and remakes the wheel there, then compares hashes."""
    with zipfile.ZipFile(wheel + ".part", "w") as zf:
        for arcname in tree_files(tree):
            path = os.path.join(tree, arcname)
            with open(path, "rb") as f:
                data = f.read()
            mode = 0o755 if os.access(path, os.X_OK) else 0o644
            info = zipfile.ZipInfo(arcname, date_time=(1980, 1, 1, 0, 0, 0))
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            info.create_system = 3  # Unix, whatever the host
            zf.writestr(info, data, compresslevel=6)
    os.replace(wheel + ".part", wheel)


def build(build_dir, out_dir):
    build_dir = os.path.abspath(build_dir)
    version = build_version(build_dir)
    with tempfile.TemporaryDirectory(prefix="attn-wheel-") as dest:
        elfs = stage(build_dir, dest)
        plat = f"manylinux_2_{glibc_minor(elfs)}_x86_64"
        tag = f"py3-none-{plat}"
        dist_info = os.path.join(dest, f"{NAME}-{version}.dist-info")
        os.makedirs(dist_info)
        meta = {
            "METADATA": (
                "Metadata-Version: 2.1\n"
                f"Name: attn-mlir\nVersion: {version}\n"
                "Summary: An MLIR-based compiler for attention kernels "
                "(CPU and NVIDIA GPUs)\n"
                "Requires-Python: >=3.8\n"
                "Provides-Extra: numpy\nRequires-Dist: numpy; extra == 'numpy'\n"
                "Provides-Extra: torch\nRequires-Dist: torch; extra == 'torch'\n"),
            "WHEEL": ("Wheel-Version: 1.0\nGenerator: attn-mlir scripts/"
                      f"attn_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"),
            "entry_points.txt": (
                "[console_scripts]\n"
                "attn-run = attn_mlir._tools:attn_run\n"
                "attn-opt = attn_mlir._tools:attn_opt\n"),
        }
        for name, text in meta.items():
            with open(os.path.join(dist_info, name), "w") as f:
                f.write(text)
        records = []
        for arcname in tree_files(dest):
            with open(os.path.join(dest, arcname), "rb") as f:
                records.append(record_line(arcname, f.read()))
        record = os.path.relpath(os.path.join(dist_info, "RECORD"), dest)
        with open(os.path.join(dest, record), "w") as f:
            f.write("\n".join(records + [f"{record},,"]) + "\n")
        os.makedirs(out_dir, exist_ok=True)
        wheel = os.path.join(out_dir, f"{NAME}-{version}-{tag}.whl")
        zip_tree(dest, wheel)
    log(f"{os.path.getsize(wheel) / 2**20:.1f} MiB -> {wheel}")
    return wheel


def unzip_tree(wheel, tree):
    """The wheel's files under `tree`, with their modes."""
    with zipfile.ZipFile(wheel) as zf:
        for info in zf.infolist():
            path = zf.extract(info, tree)
            os.chmod(path, (info.external_attr >> 16) & 0o777 or 0o644)


# PEP 517 backend (pyproject.toml): `pip install .` builds the build
# directory ($ATTN_BUILD_DIR, default build/) with scripts/env.sh, as
# scripts/test does, then packs it as above. Build dependencies are
# Debian's packages (scripts/env.sh lists them), not PyPI's.
def _built_build_dir():
    build_dir = os.environ.get("ATTN_BUILD_DIR", os.path.join(ROOT, "build"))
    env = dict(os.environ, BUILD_DIR=os.path.abspath(build_dir))
    subprocess.run(["bash", "-c", 'source "$0/scripts/env.sh" && attn_build',
                    ROOT], check=True, env=env, stdout=sys.stderr)
    return build_dir


def get_requires_for_build_wheel(config_settings=None):
    return []


def build_wheel(wheel_directory, config_settings=None,
                metadata_directory=None):
    return os.path.basename(build(_built_build_dir(), wheel_directory))


def get_requires_for_build_sdist(config_settings=None):
    return []


def build_sdist(sdist_directory, config_settings=None):
    """The tracked files of the git checkout (`pip install` of it builds
    with cmake as above)."""
    with open(os.path.join(ROOT, "CMakeLists.txt")) as f:
        version = re.search(r"project\(attn-mlir VERSION ([0-9.]+)",
                            f.read())[1]
    base = f"attn_mlir-{version}"
    files = run("git", "-C", ROOT, "ls-files", "-z").split("\0")
    path = os.path.join(sdist_directory, base + ".tar.gz")
    with tarfile.open(path, "w:gz") as tar:
        for name in filter(None, files):
            tar.add(os.path.join(ROOT, name), f"{base}/{name}")
        info = tarfile.TarInfo(f"{base}/PKG-INFO")
        data = (f"Metadata-Version: 2.1\nName: attn-mlir\n"
                f"Version: {version}\n").encode()
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    return os.path.basename(path)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build-dir", default=os.path.join(ROOT, "build"))
    parser.add_argument("--out", default=os.path.join(ROOT, "dist"))
    parser.add_argument("--unzip", nargs=2, metavar=("WHEEL", "TREE"),
                        help="unpack a wheel with its files' modes")
    parser.add_argument("--zip", nargs=2, metavar=("TREE", "WHEEL"),
                        help="remake a wheel from its unpacked tree")
    args = parser.parse_args()
    if args.unzip:
        unzip_tree(*args.unzip)
    elif args.zip:
        zip_tree(*args.zip)
    else:
        print(build(args.build_dir, args.out))


if __name__ == "__main__":
    main()
