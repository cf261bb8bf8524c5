"""A sampler plugin: subclass Sampler and return Landmarks."""

import numpy as np

from sparsekit.plugins import Landmarks, Sampler
from sparsekit.validation import check_n_landmarks, check_random_state


class KMeansPPSampler(Sampler):
    """k-means++ seeding (Arthur & Vassilvitskii 2007) in the kernel's feature space.

    The first landmark is uniform; each next one is drawn with probability proportional to
    its squared feature-space distance to the nearest landmark so far,
    d(x, c)^2 = k(x, x) + k(c, c) - 2 k(x, c). One kernel column per landmark: O(n m) kernel
    values, no n x n matrix. It touches the data only through the kernel, so it also works with
    graph kernels.
    """

    name = "kmeans-pp"
    accepts = ("vectors", "graphs")

    def __init__(self):
        pass

    def sample(self, X, kernel, n_landmarks, random_state=None) -> Landmarks:
        Xp = self.prepare_input(X, kernel)  # validated, prepared by the kernel
        n = kernel.n_samples(Xp)
        m = check_n_landmarks(n_landmarks, n)
        rng = check_random_state(random_state)
        diag = np.asarray(kernel.diag(Xp), dtype=np.float64)

        def sq_dist_to(j):
            col = np.asarray(kernel(Xp, kernel.take(Xp, [j])), dtype=np.float64)[:, 0]
            return np.maximum(diag + diag[j] - 2.0 * col, 0.0)

        chosen = [int(rng.integers(n))]
        d2 = sq_dist_to(chosen[0])
        for _ in range(1, m):
            d2[chosen] = 0.0
            total = d2.sum()
            if total > 0:
                j = int(rng.choice(n, p=d2 / total))
            else:  # every point coincides with a landmark in feature space
                j = int(rng.choice(np.setdiff1d(np.arange(n), chosen)))
            chosen.append(j)
            np.minimum(d2, sq_dist_to(j), out=d2)
        return self.make_landmarks(Xp, kernel, np.sort(chosen), np.ones(m))
