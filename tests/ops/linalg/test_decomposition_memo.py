"""The decomposition shared by the primitives of one matrix is never stale or aliased."""

from __future__ import annotations

import numpy as np
import wengert as wg


def test_an_array_changed_in_place_is_decomposed_again():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    t = wg.tensor(a)
    first = np.linalg.eigvalsh(t).numpy()
    a[0, 0] = 5.0
    np.testing.assert_allclose(np.linalg.eigvalsh(wg.tensor(a)).numpy(), np.linalg.eigvalsh(a))
    assert not np.allclose(first, np.linalg.eigvalsh(a))


def test_results_are_not_shared_between_calls():
    a = np.array([[2.0, 1.0], [1.0, 3.0]])
    v1 = np.linalg.eigh(wg.tensor(a))[1]
    v1[0, 0] = 100.0  # writes into this tensor's own array only
    v2 = np.linalg.eigh(wg.tensor(a.copy()))[1]
    np.testing.assert_allclose(v2.numpy(), np.linalg.eigh(a)[1])
    u1 = np.linalg.svd(wg.tensor(a), full_matrices=False)[0]
    u1 += 1.0
    np.testing.assert_allclose(np.linalg.svd(wg.tensor(a), full_matrices=False)[0].numpy(),
                               np.linalg.svd(a, full_matrices=False)[0])


def test_gradients_at_many_matrices_in_a_row_are_right():
    rng = np.random.default_rng(0)
    f = wg.grad(lambda a: np.sum(np.linalg.svd(a, compute_uv=False) ** 2))
    for _ in range(6):  # more matrices than the memo keeps
        a = rng.normal(size=(3, 3))
        np.testing.assert_allclose(f(a), 2.0 * a, atol=1e-12)  # Σs² = ‖a‖_F²
