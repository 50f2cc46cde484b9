"""The device a benchmark table was measured on (CPU model, or the JAX accelerator)."""

from __future__ import annotations

import os
import platform
import sys


def cpu_model() -> str:
    """CPU model name from ``/proc/cpuinfo`` (Linux), else ``platform.processor()``."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "unknown CPU"


def accelerator() -> str | None:
    """``"GPU <device kind>"`` when an already imported JAX runs on a non-CPU device."""
    jax = sys.modules.get("jax")
    if jax is None:
        return None
    try:
        backend = jax.default_backend()
        if backend == "cpu":
            return None
        return f"{backend.upper()} {jax.devices()[0].device_kind}"
    except RuntimeError:
        return None


def device_name() -> str:
    """One line naming the device: the accelerator JAX uses, if any, and the CPU.

    Examples
    --------
    >>> device_name().startswith(("GPU", "TPU", "CPU", "CUDA", "ROCM"))
    True
    """
    cpu = f"CPU {cpu_model()} ({os.cpu_count()} logical cores)"
    acc = accelerator()
    return f"{acc}; {cpu}" if acc else cpu
