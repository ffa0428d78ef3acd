"""Build of the compiled core ``textgen_metrics._native._core`` (C++17, pybind11).

Everything else of the package is declared in setup.cfg. The extension needs only a C++
compiler and Python's headers; pybind11 (headers only) comes from PyPI as a build requirement
(pyproject.toml), so ``pip install -e .`` and ``pip install .`` build it on a fresh machine.
"""

from pybind11.setup_helpers import Pybind11Extension, build_ext
from setuptools import setup

NATIVE = "src/textgen_metrics/_native"

ext_modules = [
    Pybind11Extension(
        "textgen_metrics._native._core",
        [f"{NATIVE}/_core.cpp"],
        depends=[f"{NATIVE}/{name}" for name in (
            "common.hpp", "porter.hpp", "rouge.hpp", "rouge_py.hpp", "pyutil.hpp",
            "wordnet.hpp", "meteor.hpp", "bleu.hpp", "bleu_py.hpp", "treebank.hpp", "treebank_tables.hpp",
            "perm.hpp", "tercom.hpp")],
        cxx_std=17,
        # -ffp-contract=off: no fused multiply-add, so floating-point results are those of the
        # reference implementations operation for operation
        extra_compile_args=["-O3", "-ffp-contract=off", "-fno-math-errno", "-Wall"],
    ),
]

setup(ext_modules=ext_modules, cmdclass={"build_ext": build_ext})
