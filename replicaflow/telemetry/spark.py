"""The data contract on Spark DataFrames: select and cast to the Arrow schemas of telemetry/schema.py.

Kept apart from schema.py so the simulator, which writes with pyarrow only, never imports PySpark.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
from pyspark.sql import DataFrame
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import from_arrow_schema


def conform(df: DataFrame, schema: pa.Schema) -> DataFrame:
    """Exactly the columns of ``schema``, in its order, cast to its Spark types."""
    return df.select([F.col(f.name).cast(f.dataType).alias(f.name) for f in from_arrow_schema(schema).fields])


def spark_path(path: Path | str) -> str:
    """A path as Spark's reader takes it literally: Hadoop expands ``[1]``, ``{a,b}``, ``*`` and ``?``."""
    return re.sub(r"([\[\]{}*?\\])", r"\\\1", str(path))

