"""Builds the shared Lambda layer without Docker.

The layer holds the core package (`agent_memory`) and its runtime
dependencies from `[project].dependencies` in the lock, with the `extractor`
extra (the offline MiniLM model the default session-close extractor reads) and
never the `local` extra (no embedded PostgreSQL or moto in Lambda), nor the parts of the core
package only a laptop or the console's bucket uses (`LAYER_EXCLUDED`). Wheels are
resolved for the Lambda platform (the python3.13 runtime on Amazon Linux 2023:
glibc 2.34, x86_64, CPython 3.13) by `uv pip install --python-platform`, so
building works on any host that reaches PyPI. A stamp of the inputs' hash makes a rebuild happen only when
the lock, pyproject.toml, the core sources or this builder change.

Two modes:
- `full`: the real layer in `build/lambda-layer/` (`make layer`, `make synth`, deploy);
- `placeholder`: the core package alone, straight from `layers/core`, for the
  infra tests, which must not download hundreds of megabytes.

Run `python -m infra.layer` to build (or check) the real layer and print its size.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
CORE_SRC = REPO / "layers" / "core" / "python" / "agent_memory"
PLACEHOLDER_DIR = REPO / "layers" / "core"
BUILD_DIR = REPO / "build" / "lambda-layer"
STAMP = ".layer-stamp"
# Bumped when the build recipe changes, so the stamp invalidates old builds.
RECIPE_VERSION = "5"
# The python3.13 runtime runs on Amazon Linux 2023, whose glibc is 2.34: every manylinux wheel up
# to manylinux_2_34 loads there. The functions' runtime in the stack is this version's.
PLATFORM = "x86_64-manylinux_2_34"
PYTHON_VERSION = "3.13"
# The unzipped limit of a function plus all its layers.
LAMBDA_UNZIPPED_LIMIT = 250 * 1024 * 1024
# Packages that exist only to build or type-check; never needed at run time.
PRUNE_DIRS = ("__pycache__", "tests", "test")
PRUNE_SUFFIXES = (".pyc", ".pyi")
KEEP_TEST_PACKAGES = ("numpy/testing",)  # numpy imports numpy.testing lazily; keep it whole
# Parts of the core package no Lambda function runs: the laptop's local stack (`memory serve`, the
# embedded PostgreSQL, moto; the `local` extra is not in the layer either) and the console's
# static files, which the stack deploys to their bucket from the source tree
# (infra/constructs/console.py), never from the layer. bootstrap's one lazy import of local/
# (the embedded PostgreSQL when no database is configured) answers as it does without the
# `local` extra: a ConfigurationError.
LAYER_EXCLUDED = ("local", "console/static")
# Dependencies of onnxruntime (its model-conversion tools) and tokenizers (Hub downloads) that
# inference never imports: 27 MiB the layer does without. `python -m infra.layer` runs the
# learned extractor on the built layer to show it.
UNUSED_PACKAGES = ("sympy", "mpmath", "hf_xet")
# onnxruntime's C API library (33 MiB), for native programs: the Python binding carries its own
# copy of the runtime and never loads it (the smoke test below runs without it).
UNUSED_FILES = ("onnxruntime/capi/libonnxruntime.so.*",)


def _files_for_hash() -> list[Path]:
    files = [REPO / "uv.lock", REPO / "pyproject.toml", Path(__file__)]
    files += sorted(p for p in CORE_SRC.rglob("*") if p.is_file() and "__pycache__" not in p.parts)
    return files


def inputs_hash() -> str:
    """A digest of everything the layer is built from."""
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    for path in _files_for_hash():
        digest.update(str(path.relative_to(REPO)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def is_current(target: Path = BUILD_DIR) -> bool:
    stamp = target / STAMP
    return stamp.is_file() and stamp.read_text().strip() == inputs_hash()


def runtime_export_command() -> list[str]:
    """The command that lists the layer's packages: the project's own dependencies and the offline
    model of the extractor extra, without the dev tools, the CDK toolchain or the local extra."""
    return [
        *_uv(),
        "export",
        "--quiet",
        "--frozen",
        "--extra",
        "extractor",
        "--no-default-groups",
        "--no-hashes",
        "--no-emit-project",
        "--no-header",
        "--format",
        "requirements-txt",
    ]


def _uv() -> list[str]:
    """The uv that started this process (`uv run` says which in $UV), else one on the PATH that runs
    (pyenv's `uv` shim fails when the active Python is not the one uv was installed into)."""
    if os.environ.get("UV"):
        return [os.environ["UV"]]
    found = shutil.which("uv")
    if found and subprocess.run([found, "--version"], capture_output=True, check=False).returncode == 0:  # noqa: S603
        return [found]
    return [sys.executable, "-m", "uv"]


def _run(cmd: list[str]) -> None:
    subprocess.run(cmd, cwd=REPO, check=True)  # noqa: S603 (fixed argv, no shell)


def _prune(site: Path) -> None:
    """Drop bytecode caches, stubs and bundled test suites: Lambda does not need them."""
    for path in sorted(site.rglob("*"), key=lambda p: len(p.parts), reverse=True):
        rel = path.relative_to(site).as_posix()
        if any(rel.startswith(keep) for keep in KEEP_TEST_PACKAGES):
            continue
        if path.is_dir() and path.name in PRUNE_DIRS:
            shutil.rmtree(path, ignore_errors=True)
        elif path.is_file() and path.suffix in PRUNE_SUFFIXES:
            path.unlink()


def _drop_unused(site: Path) -> None:
    for path in site.iterdir():
        if path.name.split("-")[0] in UNUSED_PACKAGES:
            shutil.rmtree(path) if path.is_dir() else path.unlink()
    for pattern in UNUSED_FILES:
        for path in site.glob(pattern):
            path.unlink()


def smoke_test(root: Path) -> str:
    """Run the learned extractor on the layer's own packages (the same platform as Lambda's runtime
    when this host is x86_64 Linux with CPython 3.13): the versions it runs and a label."""
    code = (
        "import sys, numpy, onnxruntime\n"
        "from agent_memory.adapters.embedders.onnx_minilm import MiniLMOnnxEmbedder\n"
        "from agent_memory.adapters.extractors.learned import LearnedExtractor\n"
        "x = LearnedExtractor(MiniLMOnnxEmbedder())\n"
        "label = x.classify_statements(['Please email me rather than calling.'], ['customer'])[0][0]\n"
        "print(f'numpy {numpy.__version__}, onnxruntime {onnxruntime.__version__}: {label}')\n"
    )
    done = subprocess.run(  # noqa: S603 (fixed argv, no shell)
        [
            sys.executable,
            "-I",
            "-S",
            "-B",  # no bytecode written into the layer (Lambda's /opt is read-only too)
            "-c",
            f"import sys; sys.path.insert(0, {str(root / 'python')!r})\n{code}",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def copy_core(destination: Path) -> Path:
    """The core package as the layer ships it: copied as source (pure Python; its SQL migrations
    are package data read through importlib.resources), without LAYER_EXCLUDED."""
    excluded = {CORE_SRC / part for part in LAYER_EXCLUDED}

    def ignored(folder: str, names: list[str]) -> set[str]:
        skip = set(shutil.ignore_patterns("__pycache__", "*.pyc")(folder, names))
        return skip | {name for name in names if Path(folder) / name in excluded}

    shutil.copytree(CORE_SRC, destination, ignore=ignored)
    return destination


def build(target: Path = BUILD_DIR, *, force: bool = False) -> Path:
    """Build the real layer into `target` (layout: target/python/...), unless it is current."""
    if not force and is_current(target):
        return target
    digest = inputs_hash()
    target.parent.mkdir(parents=True, exist_ok=True)
    # Built beside the target and swapped in whole, so a failed build never leaves half a layer.
    work = Path(tempfile.mkdtemp(prefix=".layer-", dir=target.parent))
    try:
        site = work / "python"
        requirements = work / "requirements.txt"
        _run([*runtime_export_command(), "--output-file", str(requirements)])
        _run(
            [
                *_uv(),
                "pip",
                "install",
                "--quiet",
                "--no-compile",
                "--only-binary",
                ":all:",
                "--python-platform",
                PLATFORM,
                "--python-version",
                PYTHON_VERSION,
                "--target",
                str(site),
                "-r",
                str(requirements),
            ]
        )
        copy_core(site / "agent_memory")
        _prune(site)
        _drop_unused(site)
        (work / STAMP).write_text(digest + "\n")
        if target.exists():
            shutil.rmtree(target)
        work.rename(target)
    finally:
        if work.exists():
            shutil.rmtree(work, ignore_errors=True)
    return target


def size_bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def largest_packages(root: Path, limit: int = 8) -> list[tuple[str, int]]:
    site = root / "python"
    sizes = [(p.name, size_bytes(p) if p.is_dir() else p.stat().st_size) for p in site.iterdir()]
    return sorted(sizes, key=lambda item: item[1], reverse=True)[:limit]


def asset_dir(mode: str) -> Path:
    """The folder to hand to `lambda.Code.from_asset` for the given layer mode."""
    if mode == "placeholder":
        return PLACEHOLDER_DIR
    if mode == "full":
        return build(BUILD_DIR)
    raise ValueError(f"unknown layer mode {mode!r}; use 'full' or 'placeholder'")


def main() -> int:
    started_current = is_current()
    root = build(force="--force" in sys.argv[1:])
    total = size_bytes(root)
    print(f"layer: {root.relative_to(REPO)} ({'up to date' if started_current else 'built'})")
    print(f"unzipped size: {total / 1024 / 1024:.1f} MiB (Lambda limit for function + layers: 250 MiB)")
    for name, size in largest_packages(root):
        print(f"  {name:<40} {size / 1024 / 1024:7.1f} MiB")
    if total >= LAMBDA_UNZIPPED_LIMIT:
        print("error: the layer is over Lambda's unzipped limit", file=sys.stderr)
        return 1
    if (
        sys.platform == "linux"
        and os.uname().machine == "x86_64"
        and f"{sys.version_info.major}.{sys.version_info.minor}" == PYTHON_VERSION
    ):
        print(f"the learned extractor on the layer's packages: {smoke_test(root)}")
    return 0


if __name__ == "__main__":
    os.chdir(REPO)
    raise SystemExit(main())
