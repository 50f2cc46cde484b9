"""Where optrank's sequential JAX loops run: on the CPU, unless asked otherwise.

The online learners, the stochastic AUC learners, CRR's SGD and the dual coordinate
descent of the active-sampling RankSVM are ``lax.scan`` / ``fori_loop`` programs with one
small step per instance or per pair. On a GPU every step costs a near-fixed launch and
synchronisation latency, whatever its size; measured on an NVIDIA H100 (docs/gpu.md):
about 17 us per step, against about 0.12 us on one CPU core, so that CBR-diag at d = 54
ran at 6.6e4 pair updates per second on the GPU and 8.0e6 on the CPU of the same machine,
and an ASAM epoch on covtype took 0.77 s against 0.044 s (a 2-core CPU machine). JAX
places a computation on its default device, the GPU when one is installed, so the
estimators that run such loops pin them to the CPU by default. The GPU pays off only
when many models share each step: a vmapped grid of 2,100 CBR-diag models ran 1.2e8 pair
updates per second there (23 times one CPU model), a grid of 512 ASAM lambdas 2.3 ms per
epoch per lambda.

The choice, in order of precedence:

* :func:`loop_device` as a context manager: ``with optrank.loop_device("default"): ...``;
* the environment variable ``OPTRANK_LOOP_DEVICE``;
* ``"cpu"``.

A value is ``"cpu"``, ``"default"`` (JAX's own placement: the GPU where there is one), a
JAX platform name (``"gpu"``, ``"cuda"``, ``"rocm"``, ``"tpu"``: its first device) or a
``jax.Device``. The Ranking-CG pricing (a loop of small Adam steps, not measured on a GPU)
is pinned too. PRSVM+'s Newton oracle (``backend="jax"``), whose work is a few large array
operations per iteration, is not: it follows JAX's placement, and PRSVM+ fitted covtype
15 times faster on the H100 than with numpy.
The functional drivers (:func:`optrank.online.run`, :func:`optrank.stochastic.run` ...)
are not pinned either: they run where their inputs and JAX's default device say, as any
JAX function; wrap a call in ``with jax.default_device(jax.devices("cpu")[0]):`` to
choose the CPU.
"""

from __future__ import annotations

import contextlib
import contextvars
import os

ENV = "OPTRANK_LOOP_DEVICE"
_DEFAULT = "the default"  # a source: neither loop_device() nor the environment
_PLATFORMS = ("cpu", "gpu", "cuda", "rocm", "tpu")
_choice: contextvars.ContextVar = contextvars.ContextVar("optrank_loop_device", default=None)


def _resolve(choice, source: str):
    """The ``jax.Device`` named by ``choice`` (set through ``source``), or None for JAX's
    own placement."""
    import jax

    if isinstance(choice, jax.Device):
        return choice
    if not isinstance(choice, str) or choice.lower() not in (*_PLATFORMS, "default"):
        raise ValueError(
            f"loop device must be 'default', a platform name {_PLATFORMS} or a jax.Device, "
            f"got {choice!r} (from {source})"
        )
    choice = choice.lower()
    if choice == "default":
        return None
    try:
        return jax.devices(choice)[0]
    except RuntimeError as exc:
        if source == _DEFAULT:  # JAX_PLATFORMS without cpu: JAX's placement is all there is
            return None
        raise RuntimeError(
            f"no JAX {choice!r} device for the sequential loops (from {source}): {exc}"
        ) from exc


def current_loop_device():
    """The device the estimators' sequential loops run on now (None: JAX's default).

    Examples
    --------
    >>> with loop_device("cpu"):
    ...     print(current_loop_device().platform)
    cpu
    >>> with loop_device("default"):
    ...     print(current_loop_device())
    None
    """
    choice = _choice.get()
    if choice is not None:
        return _resolve(choice, "loop_device()")
    if ENV in os.environ:
        return _resolve(os.environ[ENV], ENV)
    return _resolve("cpu", _DEFAULT)


@contextlib.contextmanager
def loop_device(device):
    """Run the estimators' sequential JAX loops on ``device`` inside the ``with`` block.

    Parameters
    ----------
    device : {"cpu", "default", "gpu", "cuda", "rocm", "tpu"} or jax.Device
        ``"default"`` leaves the placement to JAX (its default device, the GPU where one is
        installed): worth it only for large vmapped grids (``fit_grid`` with hundreds of
        points); single fits ran 5 to 150 times faster on the CPU (docs/gpu.md).

    The setting is a context variable of the calling thread: worker threads (joblib,
    ``GridSearchCV(n_jobs=...)``) and processes (Dask, loky) do not inherit it; set
    ``OPTRANK_LOOP_DEVICE`` in their environment instead.

    Examples
    --------
    >>> import optrank
    >>> X, y = optrank.data.load_embedded()
    >>> with optrank.loop_device("cpu"):
    ...     model = optrank.CBR(diagonal=True, random_state=0).fit(X, y)
    >>> model.coef_.shape == (X.shape[1],)
    True
    """
    _resolve(device, "loop_device()")  # refuse a bad value here, not at the first fit
    token = _choice.set(device)
    try:
        yield
    finally:
        _choice.reset(token)


@contextlib.contextmanager
def on_loop_device():
    """Make :func:`current_loop_device` JAX's default device inside the block."""
    device = current_loop_device()
    if device is None:
        yield
        return
    import jax

    with jax.default_device(device):
        yield


@contextlib.contextmanager
def loop_context(dtype: str = "float32"):
    """The context of the estimators' JAX loop work: JAX float64 when ``dtype`` is
    ``"float64"`` (a no-op for float32), on the loop device (:func:`on_loop_device`).

    A ``with`` block, not a decorator, so that the warnings of the methods using it keep
    pointing at their caller's line.
    """
    with contextlib.ExitStack() as stack:
        if dtype == "float64":
            stack.enter_context(jax_float64())
        stack.enter_context(on_loop_device())
        yield


@contextlib.contextmanager
def jax_float64():
    """JAX float64 inside the block (``jax.enable_x64``), whatever the global setting; a
    no-op where it is on already. For array work that follows JAX's own placement
    (PRSVM+'s Newton oracle, B2RMK's device problem)."""
    import jax

    if jax.config.jax_enable_x64:
        yield
    else:
        with jax.enable_x64(True):
            yield
