"""Confidence-weighted bipartite ranking: CBR (full covariance), CBR-diag and Fourier CBR.

Algorithm 1 of the CBR paper: an arriving ``(x_t, y_t)`` enters its own class buffer, and
the Gaussian ranker ``N(mu, Sigma)`` takes one SCW-I step (Proposition 1) for every stored
opposite-class instance ``x``, in slot order, with ``z = x_t - x`` and
``C_t = C max(1, N_opp / M)`` where ``N_opp`` counts the opposite-class instances seen so
far (Algorithm 2). The diagonal variant keeps only ``diag(Sigma)``; see ``docs/online.md``
for how Proposition 2 is read. Fourier CBR (dissertation ch. 5) runs the same update on
random Fourier features of ``x`` with ``C_t = C`` (Algorithm 8). The full-covariance
variants keep every stored row multiplied by the covariance factor, so a pair without loss
costs ``O(p)`` and only pairs in loss pay ``p x p`` work (:func:`_sweep_projected`); the
compact-WY (blocked) form of the same update is kept as an option (``blocked=True``).
"""

from __future__ import annotations

from functools import cache, partial
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from optrank.online._base import Learner, check_count, check_hyper, count_up
from optrank.online._buffers import Buffers, buffers_init, buffers_push_slot, check_policy
from optrank.online._features import FOURIER_GAMMA, fourier_frequencies, fourier_map
from optrank.online._scw import Info, phi_from_eta, scw_coefficients, scw_gain, scw_loss, scw_screen
from optrank.online._xla import in_grid_trace, margin_dot

UNROLL = 1  # rolled: the loop over slots compiles to one small kernel (see _xla.py)
PROJ_LANES = 16  # rows of ``CBRState.proj`` are padded to whole 16-float registers ...
PROJ_MIN_PADDED, PROJ_MAX_PADDED = 25, 192  # ... for this many features (docs/online.md)


def proj_width(p: int) -> int:
    """Width of the stored rows' projections: ``p`` rounded up to :data:`PROJ_LANES` for
    ``PROJ_MIN_PADDED <= p <= PROJ_MAX_PADDED``, else ``p``.

    The padded columns stay zero. XLA CPU runs the product ``P u`` and the rank-one map of
    ``P`` for a pair in loss faster on whole registers: on the benchmark's stream +15% at
    p = 123 (padded to 128) and +5-50% at p = 54 (64), but -11% at p = 22 (32); FCBR's
    p = 300 padded to 304 measured slower (docs/online.md, "Full CBR: projected rows").

    Examples
    --------
    >>> proj_width(22), proj_width(54), proj_width(64), proj_width(300)
    (22, 64, 64, 300)
    """
    if not PROJ_MIN_PADDED <= p <= PROJ_MAX_PADDED:
        return p
    return -(-p // PROJ_LANES) * PROJ_LANES


def padded_factor(L):
    """A full-covariance factor ``(p, r)`` completed with zero columns to ``(p,
    proj_width(p))``, the width :class:`CBRState` keeps it at (a square factor is that of
    a state from before 2026-11-27; the same ``Sigma = L L^T``)."""
    return jnp.pad(L, ((0, 0), (0, proj_width(L.shape[0]) - L.shape[1])))


def project_rows(rows, L):
    """``rows @ L`` for the ``(p, proj_width(p))`` factor (:func:`padded_factor`): the
    projections :class:`CBRState` keeps for stored rows (and ``x L`` for an arriving
    row), zero beyond column ``p``."""
    return rows @ L


class CBRState(NamedTuple):
    """State of CBR, CBR-diag and Fourier CBR.

    Attributes
    ----------
    mu : (p,) mean weight vector (the ranker); ``p = d``, or ``2 m`` with Fourier features.
    cov : (p, q) a square-root factor ``L`` of the covariance, ``Sigma = L L^T`` (CBR,
        Fourier CBR; updated in square-root form, so ``Sigma`` stays positive definite
        in float32), with ``q = proj_width(p)`` and the columns beyond ``p`` zero (whole
        registers for XLA CPU, like ``proj``); or (p,) the diagonal of ``Sigma`` for
        CBR-diag. :func:`covariance` gives ``Sigma``.
    buffers : :class:`~optrank.online._buffers.Buffers` holding (mapped) instances.
    C, phi : scalar hyperparameters (``phi = Phi^{-1}(eta)``), vmappable.
    step : int32 number of instances seen (saturating at 2^31 - 1, ``_base.COUNT_MAX``).
    key : PRNG key for reservoir sampling.
    theta : (d, m) Fourier frequencies, or None for linear CBR.
    proj : (2, M, q) the stored rows times the factor, ``buffers.data @ L``, kept current
        by every update (full covariance), in the first ``p`` columns of
        ``q = proj_width(p)`` (the rest zero); None for CBR-diag.
    bounds : (2, M, 2) for CBR-diag, per stored row ``b``: ``b.mu`` under the current
        ``mu`` (NaN when not current: after any step, or never computed) and an upper
        bound on ``sqrt(b^2 . Sigma)`` (its value when computed; the diagonal only
        shrinks) (:func:`certified_diag`); None for the full covariance. Code that sets
        ``mu``, ``cov`` or the buffers of a state by hand must set ``bounds`` to NaN.
    center : (p,) for CBR-diag: the point ``c`` the norms are taken about,
        ``|b - c|`` (:func:`recentred`); None for the full covariance.
    """

    mu: jax.Array
    cov: jax.Array
    buffers: Buffers
    C: jax.Array
    phi: jax.Array
    step: jax.Array
    key: jax.Array
    theta: jax.Array | None = None
    proj: jax.Array | None = None
    bounds: jax.Array | None = None
    center: jax.Array | None = None


def _sweep_projected(mu, L, P, x, xl, y, opp, data, mask, C, phi):
    """Algorithm 2 for full CBR / FCBR: the pair steps of one instance, in slot order.

    ``P`` holds ``b L`` for every stored row ``b`` (both classes, kept current by the
    update), ``xl = x L``. Pair ``j``'s ``u_j = L^T z_j`` is then ``xl - P[opp, j]``, one
    subtraction instead of a ``p x p`` product. All slots' margins ``m = y mu.z`` and
    variances ``v = |u|^2`` are computed at once; a pair whose step size is 0 (no loss, or a
    masked slot) leaves ``mu`` and ``L`` exactly as they are, so the sweep jumps from one
    pair in loss to the next (:func:`_next_in_loss`, by the hinge: :func:`scw_screen`),
    and only those pay for a step. A step
    ``L <- L - gamma (L u) u^T`` maps every ``u_i`` to ``u_i - gamma (u.u_i) u``, so the
    remaining margins and variances follow in ``O(k)`` from ``c = U u``, and the rows of
    ``P`` and ``xl`` by the same rank-one map (docs/online.md, "Full CBR: projected rows").
    Returns ``mu, L, P`` and the summed loss of the pairs, each before its own step.
    """
    U = xl - P[opp]
    # row norms as a matrix-vector product: XLA CPU vectorises the product, and would
    # reduce each row serially (docs/online.md)
    v = (U * U) @ jnp.ones(U.shape[1], U.dtype)
    m = y * ((x - data) @ mu)
    return _pair_steps(mu, L, P, xl, y, opp, m, v, mask, C, phi)


def _pair_steps(mu, L, P, xl, y, opp, m, v, mask, C, phi):
    """The sequential part of :func:`_sweep_projected`, from all slots' margins ``m`` and
    variances ``v``: step each pair whose SCW step size at the carried ``(m_j, v_j)`` is
    not 0, in slot order, carrying the others' ``m`` and ``v`` through each step."""
    k = m.shape[0]
    slots = jnp.arange(k)

    def _next_in_loss(start, m, v):
        live = mask & (slots >= start)
        # every slot with alpha != 0, perhaps a few more at the edge (re-tested by the step);
        # an overflowing pair is kept for the closed form, whose NaN step poisons the state
        loss, hit = scw_screen(m, v, phi, live)
        j = jnp.where(hit.any(), jnp.argmax(hit), k)
        loss = jnp.where(live & (slots <= j), loss, 0.0).sum()
        return j, loss

    def step(carry):
        j, loss, mu, L, P, xl, m, v = carry
        u = xl - P[opp, j]  # zero beyond column p (proj_width)
        vj = margin_dot(u[None], u)[0]  # |u|^2 afresh: the factor's step needs it exact
        alpha, beta = scw_coefficients(m[j], vj, C, phi)
        # the pair steps where alpha(m_j, v_j) != 0, as decided before the screen: a pair
        # the screen kept at the edge steps by 0, which leaves every array as it was
        steps = scw_coefficients(m[j], v[j], C, phi)[0] != 0
        alpha, beta = jnp.where(steps, alpha, 0.0), jnp.where(steps, beta, 0.0)
        gamma = beta / (1.0 + jnp.sqrt(jnp.maximum(1.0 - beta * vj, 0.0)))
        Lu = L @ u  # the factor is (p, q) with zero columns beyond p, like u
        s = P @ u  # (2, M): b.(L u) for every stored row
        c = (xl @ u) - s[opp]  # u_i . u for the opposite slots
        mu = mu + alpha * y * Lu
        L = L - gamma * jnp.outer(Lu, u)
        P = P - gamma * s[..., None] * u
        xl = xl - (gamma * (xl @ u)) * u
        m = m + alpha * c
        v = jnp.maximum(v - gamma * (2.0 - gamma * vj) * c * c, 0.0)
        j, more = _next_in_loss(j + 1, m, v)
        return j, loss + more, mu, L, P, xl, m, v

    j, loss = _next_in_loss(0, m, v)
    carry = jax.lax.while_loop(lambda c: c[0] < k, step, (j, loss, mu, L, P, xl, m, v))
    _, loss, mu, L, P = carry[:5]
    return mu, L, P, loss


def _wy_sweep(H, m0, mask, C, phi):
    """The sequential part of :func:`_block_full`: one pass over the rows ``g_j`` of ``H``.

    Returns ``U`` (row ``j``: ``u_j``), ``R = T^T`` (lower triangular, row ``j`` the
    ``j``-th column of ``T``), the mean coefficients ``c`` and the summed loss.
    """
    k, q = H.shape
    eye = jnp.eye(k, dtype=H.dtype)

    def body(j, carry):
        U, R, c, loss = carry
        h = H[j]
        a = U @ h  # U^T g_j in column notation
        u = h - (R @ a) @ U  # Q_j^T g_j
        v = u @ u
        m = m0[j] + c @ a
        alpha, beta = scw_coefficients(m, v, C, phi, mask[j])
        gamma = beta / (1.0 + jnp.sqrt(jnp.maximum(1.0 - beta * v, 0.0)))
        step = eye[j] - (U @ u) @ R  # e_j - T U^T u_j
        return (
            jax.lax.dynamic_update_index_in_dim(U, u, j, 0),
            jax.lax.dynamic_update_index_in_dim(R, gamma * step, j, 0),
            c + alpha * step,
            loss + jnp.where(mask[j], scw_loss(m, v, phi), 0.0),
        )

    zero = jnp.zeros((), H.dtype)
    init = (jnp.zeros((k, q), H.dtype), jnp.zeros((k, k), H.dtype), jnp.zeros(k, H.dtype), zero)
    return jax.lax.fori_loop(0, k, body, init)


def _block_full(mu, L, P, x, y, data, mask, C, phi):
    """All pair steps of one instance in compact-WY form (full CBR / FCBR, docs/online.md).

    With ``L_0`` the factor on entry, the factor after ``j`` pairs is
    ``L_j = L_0 Q_j``, ``Q_j = prod_{i<j} (I - gamma_i u_i u_i^T) = I - U T U^T`` (``T``
    upper triangular). ``G = Z L_0`` holds ``g_j = L_0^T z_j`` for all slots (one GEMM), so
    ``u_j = L_j^T z_j = g_j - U T^T (U^T g_j)``; the mean moves by
    ``alpha_j y L_0 Q_j u_j``, and ``Q_j u_j = u_j - U T (U^T u_j)`` lies in the span of
    ``U``: the accumulated move is ``y L_0 U c`` with ``c`` in slot coordinates, and the
    margin of pair ``j`` is ``y mu_0.z_j + c.(U^T g_j)``. At the end
    ``L_k = L_0 - (L_0 U) T U^T`` and ``mu_k = mu_0 + y L_0 U c`` (GEMMs): the same
    factor ``L_0 Q_k`` as the per-pair steps, so ``Sigma = L L^T`` stays positive
    definite, and each ``v_j = |u_j|^2`` is a sum of squares. The stored rows'
    projections follow as ``P Q_k = P - ((P U) T) U^T``.
    """
    Z = x - data
    m0 = y * (Z @ mu)
    U, R, c, loss = _wy_sweep(Z @ L, m0, mask, C, phi)
    LU = L @ U.T
    L_k = L - (LU @ R.T) @ U
    U = jnp.pad(U, ((0, 0), (0, P.shape[-1] - U.shape[1])))  # to proj_width
    return mu + y * (LU @ c), L_k, P - ((P @ U.T) @ R.T) @ U, loss


def _pair_diag_step(mu, cov, z, y, C, phi, ok):
    """One CBR-diag pair step: ``(mu, cov, loss, alpha, v)``."""
    sz = cov * z
    v, m = margin_dot(jnp.stack([sz, mu]), z)  # not jnp.sum: XLA would reduce serially
    m = y * m
    # precision form G = 1/cov: G <- G + gain z^2 (Sherman-Morrison on the diagonal)
    alpha, gain = scw_gain(m, v, C, phi, ok)
    # A pair without loss has alpha = gain = 0 and would leave mu and cov as they are: skip
    # its two vector passes and the division (1.2x per pair at d = 54, 1.4x at d = 300 on
    # the benchmark stream, where most pairs of a trained ranker have no loss; under vmap,
    # as in run_grid, the cond becomes a select and both sides run, as before)
    mu, cov = jax.lax.cond(
        alpha != 0,  # not alpha > 0: a NaN step must still poison the state (DIVERGED)
        lambda: (mu + alpha * y * sz, cov / (1.0 + gain * sz * z)),
        lambda: (mu, cov),
    )
    return mu, cov, jnp.where(ok, scw_loss(m, v, phi), 0.0), alpha, v


def _pair_diag(mu, cov, z, y, C, phi, ok):
    return _pair_diag_step(mu, cov, z, y, C, phi, ok)[:3]


def rank_against_buffer(pair, mu, cov, x, y, data, mask, C, phi):
    """Algorithm 2: one pair step per occupied slot of ``data``.

    A masked slot gets ``alpha = beta = 0``, which leaves ``mu`` and ``cov`` exactly
    unchanged, so no select over the state is needed. The differences ``z`` of all slots
    are formed in one vectorised pass before the sequential loop.
    """

    def body(carry, slot):
        mu, cov = carry
        z, ok = slot
        mu, cov, loss = pair(mu, cov, z, y, C, phi, ok)
        return (mu, cov), loss

    (mu, cov), losses = jax.lax.scan(body, (mu, cov), (x - data, mask), unroll=UNROLL)
    return mu, cov, losses.sum()


def row_bounds(rows, mu, cov, center):
    """``[row . mu, |row - center|]`` of each row (last axis 2), ``|z| = sqrt(z^2 .
    Sigma)``: the two numbers per stored row of CBR-diag's certificate
    (:func:`certified_diag`)."""
    return jnp.stack([rows @ mu, _norms(rows, cov, center)], axis=-1)


def _norms(rows, cov, center):
    """``|row - center|`` of each row in the norm ``sqrt(z^2 . Sigma)`` (diagonal cov)."""
    off = rows - center
    return jnp.sqrt((off * off) @ cov)


RECENTER_EVERY = 1024
"""CBR-diag's certificate centre is the mean of the stored rows, taken again at instances
1, 2, 4, ..., 512 and then every this many (:func:`recentred`)."""


def recentred(center, bounds, buffers, step):
    """The certificate's centre and bounds for the instance numbered ``step`` (from 1),
    after its row was stored: at 1, 2, 4, ... and every :data:`RECENTER_EVERY`, the mean
    of the occupied slots of both buffers, with every norm marked not current (NaN);
    otherwise as they were. Any centre makes the certificate valid; one near the data
    makes it tight (raw features far from the origin, or Fourier features, gave bounds
    ``|x| + |b|`` far above ``|x - b|``)."""
    due = ((step & (step - 1)) == 0) | (step % RECENTER_EVERY == 0)

    def mean():
        weights = buffers.mask.astype(center.dtype)
        total = jnp.einsum("cm,cmp->p", weights, buffers.data)
        return total / jnp.maximum(weights.sum(), 1.0), bounds.at[..., 1].set(jnp.nan)

    return jax.lax.cond(due, mean, lambda: (center, bounds))


def _certificate(here, b, y, phi, p: int):
    """``(lower, reach, slack)`` per slot: ``lower = y (x.mu - b.mu)`` (the margin),
    ``reach = |x - c| + |b - c|`` (bounds ``sqrt(v)``), and the slack of the test
    ``lower - phi reach > slack``: ``8 sqrt(p) eps`` of the terms' magnitudes, so that a
    margin within rounding of the bound is left to the loop."""
    lower = y * (here[0] - b[:, 0])
    reach = here[1] + b[:, 1]
    tol = 8.0 * float(np.sqrt(p)) * jnp.finfo(here.dtype).eps
    return lower, reach, tol * (jnp.abs(here[0]) + jnp.abs(b[:, 0]) + phi * reach)


def _first_open(lower, reach, slack, mask, phi, start):
    """First occupied slot from ``start`` on that the certificate does not clear (the
    number of slots when it clears them all); NaN clears nothing."""
    clear = (lower - phi * reach > slack) | ~mask | (jnp.arange(mask.shape[0]) < start)
    return jnp.where(clear.all(), mask.shape[0], jnp.argmin(clear))


def first_uncertified(here, b, y, mask, phi, p: int):
    """Index of the first occupied slot that the certificate of :func:`certified_diag`
    does not clear (``len(mask)`` when it clears them all), for an instance with
    ``here = [x.mu, |x - c|]`` against rows with bounds ``b``; ``p`` features."""
    lower, reach, slack = _certificate(here, b, y, phi, p)
    return _first_open(lower, reach, slack, mask, phi, 0)


def certified_diag(mu, cov, bounds, center, x, y, own, slot, written, rows, mask, C, phi):
    """CBR-diag's pair steps of one instance (Algorithm 2), with a certificate per slot.

    ``rows`` are both class buffers ``(2, M, p)``, the opposite one ``rows[1 - own]``
    (indexed inside the loops: a slice taken outside is copied into them, ~1 us per
    instance at p = 300). A pair ``(x, b)`` has no loss, so no step, when
    ``m = y mu.(x - b) >= phi sqrt(v)``, ``v = (x - b)^2 . Sigma``. By the triangle
    inequality in the norm ``|z| = sqrt(z^2 . Sigma)``, ``sqrt(v) <= |x - c| + |b - c|``
    for any centre ``c`` (``center``, :func:`recentred`); with ``b.mu`` and ``|b - c|``
    kept for every stored row (``bounds``), the test ``y (x.mu - b.mu) - phi (|x - c| +
    |b - c|) > slack`` clears a slot in O(1) after the O(p) products ``x.mu``,
    ``|x - c|``. The loop steps the first slot not cleared; a step by
    ``alpha`` moves every later margin by ``alpha (Sigma z_j).(x - b_i)``, at most
    ``alpha sqrt(v_j) (|x - c| + |b_i - c|)`` (Cauchy-Schwarz), so the margins' lower
    bounds drop by that and the loop goes on at the next slot they do not clear. Cleared slots have
    no loss and no step in the plain loop either: the pairs stepped, their order and
    their arithmetic are the plain loop's, to rounding. ``slack`` (a few units of
    rounding of the terms) leaves a margin within rounding of the bound to the loop; a
    margin that cancels (``x.mu`` small against its terms) is decided to rounding, as
    the plain loop's own two reductions (single stream, grid) decide it differently.

    After the instance, a step having moved ``mu`` makes every ``b.mu`` not current (NaN);
    the opposite buffer's are recomputed (one matrix-vector product) when next needed.
    A step only shrinks the diagonal (each entry divided by ``1 + gain sigma z^2 >= 1``,
    also in floating point), so a norm ``|b - c|`` computed earlier stays an upper bound:
    norms are computed when a row is stored (or, once, for a buffer read before it has
    them) and kept. Single stream only: ``run_grid`` runs the plain loop (docs/online.md,
    "CBR-diag: a certificate per stored row").
    """
    k = rows.shape[1]
    here = row_bounds(x, mu, cov, center)  # [x.mu, |x - c|]
    bounds = bounds.at[own, slot].set(jnp.where(written, here, bounds[own, slot]))
    opp = 1 - own
    b = bounds[opp]
    b = jax.lax.cond(jnp.isnan(b[:, 0]).any(), lambda: b.at[:, 0].set(rows[opp] @ mu),
                     lambda: b)
    b = jax.lax.cond(jnp.isnan(b[:, 1]).any(),
                     lambda: b.at[:, 1].set(_norms(rows[opp], cov, center)),
                     lambda: b)
    bounds = bounds.at[opp].set(b)
    lower, reach, slack = _certificate(here, b, y, phi, x.shape[0])

    def body(carry):
        j, mu, cov, loss, lower = carry
        mu, cov, pair_loss, alpha, v = _pair_diag_step(mu, cov, x - rows[opp, j], y, C, phi,
                                                      mask[j])
        # the step moves every later margin by alpha (Sigma z_j).(x - b_i), at most
        # alpha sqrt(v_j) |x - b_i| <= alpha sqrt(v_j) reach_i (Cauchy-Schwarz; the norms
        # only shrink): the margins' lower bounds follow, and the next pair is the next slot
        # they do not clear
        lower = lower - alpha * jnp.sqrt(jnp.maximum(v, 0.0)) * reach
        return _first_open(lower, reach, slack, mask, phi, j + 1), mu, cov, loss + pair_loss, lower

    zero = jnp.zeros((), mu.dtype)
    start = (_first_open(lower, reach, slack, mask, phi, 0), mu, cov, zero, lower)
    _, new_mu, new_cov, loss, _ = jax.lax.while_loop(lambda c: c[0] < k, body, start)
    moved = (new_mu != mu).any() | (new_cov != cov).any()  # NaN counts as moved
    # a step moves mu: every b.mu is out of date. The diagonal only shrinks (each step
    # divides it by 1 + gain cov z^2 >= 1), so every |b| stays an upper bound: kept
    return new_mu, new_cov, loss, jnp.where(moved, bounds.at[..., 0].set(jnp.nan), bounds)


@cache
def _cbr_update(policy: str, diagonal: bool, class_weighted: bool, blocked: bool = False):
    def update(state: CBRState, x, y):
        x = jnp.asarray(x, state.mu.dtype)  # the state's precision, whatever the input's
        if state.theta is not None:
            x = fourier_map(x, state.theta)
        y = jnp.asarray(y, state.mu.dtype)
        own = (y > 0).astype(jnp.int32)
        opp = 1 - own
        key, sub = jax.random.split(state.key)
        step = count_up(state.step)  # saturates at 2^31 - 1: the centre is then kept
        size = state.buffers.data.shape[1]
        C_t = state.C
        if class_weighted:
            C_t = state.C * jnp.maximum(1.0, state.buffers.seen[opp].astype(state.C.dtype) / size)
        # Push the own-class instance first, then read the opposite buffer from the new
        # value: the push leaves class ``opp`` untouched, so the values are the same, but
        # XLA can then update the buffer in place; reading before writing makes it copy the
        # whole (2, M, d) buffer twice per instance.
        buffers, slot, written = buffers_push_slot(state.buffers, own, x, sub, policy)
        data, mask = buffers.data[opp], buffers.mask[opp]
        mu, cov, proj, bounds, center = (state.mu, state.cov, state.proj, state.bounds,
                                         state.center)
        if diagonal:
            if in_grid_trace():  # vmapped: the plain loop; the bounds are not kept
                mu, cov, loss = rank_against_buffer(_pair_diag, mu, cov, x, y, data, mask, C_t,
                                                    state.phi)
                bounds = jnp.full_like(bounds, jnp.nan)
            else:
                center, bounds = recentred(center, bounds, buffers, step)
                mu, cov, loss, bounds = certified_diag(mu, cov, bounds, center, x, y, own,
                                                       slot, written, buffers.data, mask,
                                                       C_t, state.phi)
        else:
            p = cov.shape[0]
            square = cov.shape[1] < proj_width(p)  # a state kept from before 2026-11-27
            if square:  # padded for the instance, square again after: the carry's shape
                cov = padded_factor(cov)
            xl = project_rows(x, cov)
            proj = proj.at[own, slot].set(jnp.where(written, xl, proj[own, slot]))
            if blocked:
                mu, cov, proj, loss = _block_full(mu, cov, proj, x, y, data, mask, C_t, state.phi)
            else:
                mu, cov, proj, loss = _sweep_projected(mu, cov, proj, x, xl, y, opp, data, mask,
                                                       C_t, state.phi)
            if square:
                cov = cov[:, :p]
        new = state._replace(mu=mu, cov=cov, proj=proj, bounds=bounds, center=center,
                             buffers=buffers, step=step, key=key)
        return new, Info(loss=loss, n_pairs=state.buffers.count[opp])

    return update


def covariance(state: CBRState) -> jax.Array:
    """The covariance ``Sigma`` of a CBR state: ``L L^T`` from the full variant's factor,
    or the diagonal of CBR-diag as a vector.

    Examples
    --------
    >>> import jax
    >>> lrn = cbr(buffer_size=4)
    >>> covariance(lrn.init(jax.random.PRNGKey(0), 3)).shape
    (3, 3)
    """
    return state.cov if state.cov.ndim == 1 else state.cov @ state.cov.T


def _score(state: CBRState, X):
    if state.theta is not None:
        X = fourier_map(X, state.theta)
    return X @ state.mu


@partial(jax.jit, static_argnames=("p", "buffer_size", "diagonal", "dtype"))
def _init_state(key, p, C, eta, buffer_size, diagonal, dtype, theta=None):
    # jitted: one dispatch instead of a dozen eager ones (an estimator's fit calls it once)
    dtype = jnp.dtype(dtype)
    cov = jnp.ones(p, dtype) if diagonal else jnp.eye(p, proj_width(p), dtype=dtype)
    return CBRState(
        mu=jnp.zeros(p, dtype),
        cov=cov,
        buffers=buffers_init(buffer_size, p, dtype),
        C=jnp.asarray(C, dtype),
        phi=phi_from_eta(jnp.asarray(eta, dtype)).astype(dtype),
        step=jnp.zeros((), jnp.int32),
        key=key,
        theta=theta,
        proj=None if diagonal else jnp.zeros((2, buffer_size, proj_width(p)), dtype),
        bounds=jnp.full((2, buffer_size, 2), jnp.nan, dtype) if diagonal else None,
        center=jnp.zeros(p, dtype) if diagonal else None,
    )


def cbr(
    C=2.0**-10,
    eta=0.7,
    *,
    buffer_size: int = 50,
    policy: str = "fifo",
    diagonal: bool = False,
    class_weighted: bool = True,
    blocked: bool = False,
    dtype=jnp.float32,
) -> Learner:
    """CBR (Proposition 1) or CBR-diag (Proposition 2, ``diagonal=True``).

    Parameters
    ----------
    C : float or array
        Penalty; vmappable (stored in the state). Default ``2^-10`` (1 until 2026-11-28;
        docs/online.md, "Default C of CBR").
    eta : float or array in (0.5, 1)
        Confidence; ``phi = Phi^{-1}(eta)``. Vmappable.
    buffer_size : int
        Slots per class buffer (``M_+ = M_- = buffer_size``).
    policy : {"fifo", "reservoir"}
    diagonal : bool
        Keep only the diagonal of the covariance.
    class_weighted : bool
        Use ``C_t = C max(1, N_opp / M)`` (True, Algorithm 1) or ``C_t = C``.
    blocked : bool
        Full covariance only: run the pair steps of an instance in compact-WY form (the
        same update, every pair in matrix-matrix products) instead of the default sweep
        over projected rows, which pays ``p x p`` work only for pairs in loss and was the
        faster at every width measured (docs/online.md, "Full CBR: projected rows");
        ignored with ``diagonal=True``.
    dtype : float32 (default) or float64.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> from optrank.online import run
    >>> lrn = cbr(C=0.5, buffer_size=3, diagonal=True)
    >>> s = lrn.init(jax.random.PRNGKey(0), 2)
    >>> s, info = lrn.update(s, jnp.array([1.0, 0.0]), 1)
    >>> s, info = lrn.update(s, jnp.array([0.0, 1.0]), -1)
    >>> bool(lrn.score(s, jnp.array([[1.0, 0.0]]))[0] > 0), int(info.n_pairs)
    (True, 1)
    """
    check_policy(policy)
    check_count(buffer_size=buffer_size)
    check_hyper(C=(C, "positive"), eta=(eta, "confidence"))

    def init(key, n_features: int) -> CBRState:
        return _init_state(key, n_features, C, eta, buffer_size, diagonal, dtype)

    update = _cbr_update(policy, bool(diagonal), bool(class_weighted), bool(blocked))
    return Learner(init, update, _score)


def fourier_cbr(
    C=1.0,
    eta=0.7,
    gamma=FOURIER_GAMMA,
    *,
    n_components: int = 150,
    buffer_size: int = 50,
    policy: str = "fifo",
    diagonal: bool = False,
    class_weighted: bool = False,
    blocked: bool = False,
    dtype=jnp.float32,
) -> Learner:
    """Fourier CBR (FCBR, dissertation Proposition 3 / Algorithms 8-9).

    CBR on ``2 n_components`` random Fourier features of the Gaussian kernel
    ``exp(-gamma ||x - x'||^2)``; frequencies are drawn from the ``init`` key.
    ``C_t = C`` as in Algorithm 8 unless ``class_weighted``. ``blocked`` as for :func:`cbr`.

    Examples
    --------
    >>> import jax, jax.numpy as jnp
    >>> lrn = fourier_cbr(n_components=8, buffer_size=4)
    >>> s = lrn.init(jax.random.PRNGKey(0), 3)
    >>> s.mu.shape, s.theta.shape
    ((16,), (3, 8))
    """
    check_policy(policy)
    check_count(buffer_size=buffer_size, n_components=n_components)
    check_hyper(C=(C, "positive"), eta=(eta, "confidence"), gamma=(gamma, "positive"))

    def init(key, n_features: int) -> CBRState:
        k_theta, k_state = jax.random.split(key)
        theta = fourier_frequencies(k_theta, n_features, n_components, gamma, jnp.dtype(dtype))
        return _init_state(k_state, 2 * n_components, C, eta, buffer_size, diagonal, dtype, theta)

    update = _cbr_update(policy, bool(diagonal), bool(class_weighted), bool(blocked))
    return Learner(init, update, _score)
