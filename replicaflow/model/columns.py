"""Rules written once for NumPy arrays and Spark Columns (docs/architecture.md): the operations that the
operators of both cannot express alike. The one place in model/ that imports pyspark, lazily, so
model stays importable without Spark."""

from __future__ import annotations

import numpy as np


def is_column(x) -> bool:
    return type(x).__name__ == "Column" and type(x).__module__.startswith("pyspark")


def minimum(a, b):
    """``np.minimum`` for arrays, ``F.least`` for Columns."""
    if is_column(a) or is_column(b):
        from pyspark.sql import functions as F

        return F.least(a if is_column(a) else F.lit(a), b if is_column(b) else F.lit(b))
    return np.minimum(a, b)


def maximum(a, b):
    """``np.maximum`` for arrays, ``F.greatest`` for Columns."""
    if is_column(a) or is_column(b):
        from pyspark.sql import functions as F

        return F.greatest(a if is_column(a) else F.lit(a), b if is_column(b) else F.lit(b))
    return np.maximum(a, b)


def where(cond, yes, no):
    """``np.where`` for arrays, ``F.when(...).otherwise(...)`` for Columns."""
    if is_column(cond):
        from pyspark.sql import functions as F

        return F.when(cond, yes).otherwise(no)
    return np.where(cond, yes, no)
