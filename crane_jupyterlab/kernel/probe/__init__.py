"""The probe: what the target cell will use, described without running it (one family of the payload).

Entry point `run(source, options, namespace)` (`describe.py`): it never raises, never prints, never
evaluates code from the cell, never consumes an iterator and leaves the user namespace untouched.
User-defined properties, `__getattr__`, `__repr__`, `__len__` and `__eq__` are not called (map-style
datasets are the one exception: sampling them is the point, and it runs under the time budget).

The data path: `describe.run` reads the cell (`scan.py`, through the one cell transform `..cell`), follows
its names, attribute chains and subscripts on the live objects (`refs.py`), checks its calls and files
(`calls.py`), its imports (`imports.py`) and style names (`styles.py`), finds the objects they were built
or fitted from (`lineage.py`), reads the libraries (`libraries.py`) and their docs (`docs.py`), and hands
each object to one summarizer per library (`summarize/`). Everything reads objects through `safe.py`:
type tests no metaclass can fool, access restricted to trusted libraries, bounded reprs, the time budget.

Result: see docs/architecture.md section 1. Every fact is `{"cat": "S"|"R"|"V", "key": str, "value": json}`
with these stable keys (category in brackets):

- any object: `len` [S], `shape` [S], `dtype` [R], `value` [V] (scalars, small containers),
  `items` [V] (elements of a small container), `keys` [S] (dict keys), `element_types` [R],
  `signature` [R] (callables), `attrs` [V] (instance attributes of a plain object), `repr` [V],
  `close` [S] (names close to a missing attribute/key/column), `note` [R] (why something was not read),
  `undefined_globals` [S] (globals a user function reads that the kernel lacks).
- 1-D data and frame columns: `nan` [V] (count), `min`/`max` [V], `unique` [V] (count), `kind` [V]
  (binary, few-valued, categorical (a category dtype), continuous, many-valued, constant, text, empty,
  all-nan), `examples` [V],
  `counts` [V] (`[[value, count], ...]`: most frequent first, then the least frequent), `sampled` [V]
  (rows the stats ran on).
- DataFrame: `columns` [S] (names, capped), `columns_more` [S], `dtypes` [R] (`{dtype: count}`),
  `non_numeric_columns` [R] (wide frames),
  `nan_columns` [V] (`{column: nan count}`); children are the columns, expr `df['col']`.
- torch: `device` [R], `requires_grad` [R], `contiguous` [R], `note` [R] (why no value stats:
  time budget, GPU busy, a CUDA error); torch.device `device` [R]; optimizer `lr` [V]; nn.Module
  `class` [R], `training` [V], `param_dtype`/`param_device`/`param_requires_grad` [R],
  `n_params` [S], `last_out_features` [S], `containers`/`custom_modules`/`forward_pre_hooks`/
  `forward_hooks` [R] (whose forward runs, what may replace its input or output), loss
  `ignore_index`/`reduction`/`label_smoothing` [R]; layers (children)
  carry `in_features`/`out_features`/`in_channels`/`out_channels`/`kernel_size`/
  `num_embeddings`/`embedding_dim`/`num_features`/`normalized_shape` [S], `weight_dtype` [R],
  `weight_device` [R] (several devices); DataLoader `batch_size`/`drop_last`/`num_workers` [S],
  `shuffle` [V], `sampler` [R], `collate_fn` [R], child `.dataset`; Dataset
  `len`/`sample_shapes`/`batch_shape` [S], `labels` [V].
- tensorflow/keras: `element_spec` [R], `cardinality` [S]; models `input_shape`/`output_shape` [S],
  `last_units` [S], `last_activation` [R], `loss` [R], `compiled`/`built` [V];
  image iterators `samples`/`num_classes`/`batch_size`/`image_shape`/`target_size` [S],
  `class_indices` [V], `class_mode`/`color_mode` [R].
- sklearn: `class` [R], `fitted` [V], `n_features_in_` [S], `feature_names_in_` [R],
  `classes_` [V], `n_outputs_` [S], `steps` [R], `params` [R] (non-default constructor params),
  `columns_used` [S] (ColumnTransformer).
- scipy sparse: `nnz` [S], `format` [R]; PIL image: `size` [S], `mode` [R].
- module entries (`modules`): `version`, `aliases`; torch adds `grad_enabled` [V], `autocast` [R] and
  `cuda_available` [V] (never by torch.cuda.is_available(): see libraries._cuda_available); sklearn
  adds `array_api_dispatch` [R].
- `imports` (only when the cell imports): one entry per imported name, `line`/`module`/`name`/`state`
  (`loaded`, `found`, `missing`, `no-name`, `unknown`), `missing`, `note`, `version`, `elsewhere`
  (kernel/imports.py: found through the kernel's finders without importing anything).
- style names passed to `style.use`/`style.context` (matplotlib.style loaded, or matplotlib not loaded
  and its style library read from the disk where the import system would find it): `<matplotlib style 'x'>`
  with `in_library`/`deprecated_alias`/`file_exists` [V], `matplotlib` [R], `close`/`renamed` [S]; files the
  cell opens: `path '...'` entries with `exists` [V].
"""

from __future__ import annotations

from .describe import run

__all__ = ["run"]
