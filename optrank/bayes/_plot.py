"""Figure 1 of the paper: kernel weights and sample weights of a fitted model."""

from __future__ import annotations

import numpy as np


def plot_weights(kernel_weights, sample_weights, kernel_names=None, title=None):
    """Bar chart of kernel weights (a) and stem plot of sample weights (b); returns the Figure.

    Uses the object-oriented matplotlib API (no pyplot state), so it is safe under Agg.

    Examples
    --------
    >>> fig = plot_weights(np.array([0.1, 0.9]), np.array([0.5, 0.0, -0.2]))
    >>> len(fig.axes)
    2
    """
    from matplotlib.figure import Figure

    from optrank.plotting import draw_kernel_weights

    fig = Figure(figsize=(10, 3.5))
    ax_k, ax_s = fig.subplots(1, 2)
    draw_kernel_weights(ax_k, kernel_weights, kernel_names)
    ax_k.set_title("(a) kernel weights")
    ax_s.stem(np.arange(1, len(sample_weights) + 1), sample_weights, markerfmt=" ", basefmt="k-")
    ax_s.set_xlabel("sample")
    ax_s.set_ylabel("sample weights")
    ax_s.set_title("(b) sample weights")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
