"""llama.cpp on CPUs with AMX (issue 44): its AMX kernels crash in decode (llama.cpp #20824).

The installed build is read from llama.cpp's own system info and the CPU from its flags, never
guessed from the machine; the in-process judge's guard is shown with a stand-in system info and
CPU flags on the real model (SmolLM2-135M: a check of the plumbing, not of a judge)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from textgen_metrics import llama_install
from textgen_metrics.judges import LlamaCppJudge
from textgen_metrics.judges.tiny import tiny_model_file

# llama.cpp's system info on a Sapphire Rapids Xeon (issue 44), and a /proc/cpuinfo flags line of one
AMX_INFO = ("CPU : SSE3 = 1 | SSSE3 = 1 | AVX = 1 | AVX2 = 1 | F16C = 1 | FMA = 1 | BMI2 = 1 | AVX512 = 1 | "
            "AVX512_VBMI = 1 | AVX512_VNNI = 1 | AVX512_BF16 = 1 | AMX_INT8 = 1 | LLAMAFILE = 1 | OPENMP = 1 | "
            "REPACK = 1 | ")
AMX_CPU = "processor\t: 0\nflags\t\t: fpu sse avx2 avx512f avx512_vnni amx_bf16 amx_tile amx_int8\n"


def test_the_system_info_and_cpu_flags_are_read_as_llama_cpp_and_the_kernel_write_them():
    features = llama_install.parse_system_info(AMX_INFO)
    assert features["AMX_INT8"] == "1" and features["AVX512_VNNI"] == "1" and features["REPACK"] == "1"
    assert "amx_int8" in llama_install.cpu_flags(AMX_CPU)
    assert llama_install.cpu_flags("processor\t: 0\n") == frozenset()
    amx_build, plain_build = AMX_INFO, AMX_INFO.replace("AMX_INT8 = 1", "AMX_INT8 = 0")
    amx_cpu, plain_cpu = llama_install.cpu_flags(AMX_CPU), frozenset({"avx2", "avx512f"})
    assert llama_install.takes_amx_path(amx_build, amx_cpu)
    assert not llama_install.takes_amx_path(plain_build, amx_cpu)
    assert not llama_install.takes_amx_path(amx_build, plain_cpu)  # the kernels register only where AMX is


def test_the_installed_llama_cpp_has_no_amx_kernels_and_takes_no_amx_path_on_this_cpu():
    """The build every documented install gives (``llama_install``: the Makefile, the README's
    commands): what llama.cpp itself reports, against this CPU's own flags."""
    info = llama_install.system_info()
    features = llama_install.parse_system_info(info)
    assert "AVX" in features or "NEON" in features, f"llama.cpp's system info is not readable: {info!r}"
    flags = llama_install.cpu_flags()
    assert not llama_install.takes_amx_path(info, flags), (
        f"this llama.cpp would run its AMX kernels on this CPU (llama.cpp #20824): {info}")
    assert not llama_install.build_has_amx(info), (
        f"the installed llama.cpp has its AMX kernels (python -m textgen_metrics.llama_install installs it without): "
        f"{info}")
    check = subprocess.run([sys.executable, "-m", "textgen_metrics.llama_install", "--check"], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f"CPU has AMX-INT8: {'amx_int8' in flags}; build has AMX kernels: False" in check.stdout


def test_the_wheel_is_kept_per_cpu_and_python_never_shared_across_them():
    base = frozenset({"avx2", "avx512f"})
    folder = llama_install.wheel_folder("cp311", base)
    assert folder == llama_install.wheel_folder("cp311", frozenset(sorted(base)))
    assert folder != llama_install.wheel_folder("cp311", base | {"amx_int8"})
    assert folder != llama_install.wheel_folder("cp312", base)
    assert llama_install.LLAMA_CPP_VERSION in folder


@pytest.fixture(scope="module")
def smollm2():
    return tiny_model_file("smollm2")


def _loaded(monkeypatch, smollm2, info, cpuinfo):
    """The judge's model loaded where llama.cpp reports ``info`` and the CPU ``cpuinfo``."""
    monkeypatch.setattr("textgen_metrics.judges.llamacpp.system_info", lambda: info)
    monkeypatch.setattr("textgen_metrics.judges.llamacpp.cpu_flags", lambda: llama_install.cpu_flags(cpuinfo))
    judge = LlamaCppJudge(smollm2, n_ctx=512)
    return judge, judge.llama


@pytest.mark.real_model
@pytest.mark.parametrize("info,cpuinfo,guarded", [
    (AMX_INFO, AMX_CPU, True),                                            # the crash's setting: guarded
    (AMX_INFO.replace("AMX_INT8 = 1", "AMX_INT8 = 0"), AMX_CPU, False),   # a build without the kernels
    (AMX_INFO, "flags\t: avx2 avx512f\n", False),                         # a CPU without AMX
])
def test_the_offline_judge_loads_without_extra_buffer_types_only_where_the_amx_path_would_run(
        monkeypatch, smollm2, info, cpuinfo, guarded):
    judge, llama = _loaded(monkeypatch, smollm2, info, cpuinfo)
    assert judge.amx_guarded is guarded
    assert llama.model_params.use_extra_bufts is (not guarded)
    # the guard is gone once the model is built: the next Llama takes llama.cpp's own defaults again
    from llama_cpp import llama_cpp as lib

    assert lib.llama_model_default_params().use_extra_bufts is True
    out = llama.create_chat_completion(messages=[{"role": "user", "content": "Say yes."}], max_tokens=4,
                                       temperature=0.0)
    assert out["choices"][0]["message"]["content"] is not None
