"""torch devices and dtypes that cannot go together, each from a check torch itself makes.

- device-mismatch (RuntimeError): the operands of a module call, an elementwise operator, `torch.cat` /
  `stack`, `@` / `matmul` / `mm` / `bmm`, a loss, on different devices (cpu vs cuda, cuda:0 vs cuda:1).
  Dispatch checks that every tensor argument of a kernel lives on one device ("Expected all tensors to be
  on the same device"); the exceptions torch makes are honoured: a 0-dim CPU tensor mixes with anything
  in elementwise ops (so every operand must be known to have a dimension), and indices may stay on the
  CPU when they index a CUDA tensor (so indexing is judged only for a CPU tensor indexed by a CUDA index
  tensor: "indices should be either on cpu or on the same device as the indexed tensor").
- dtype-mismatch: the input of a Linear/Conv/ConvTranspose/Bilinear layer whose dtype is not its weight's
  (matmul and convolution never promote: RuntimeError), of a recurrent layer (ValueError, RNN.check_input),
  float indices into an Embedding (RuntimeError: indices must be Long or Int); two operands of `@` /
  `matmul` / `mm` / `bmm` / `dot` of different dtypes (RuntimeError). Not judged under autocast, which casts.
- tensor-to-numpy: `t.numpy()`, NumPy functions (they call `Tensor.__array__` -> `numpy()`), scikit-learn
  metrics and estimator methods (they validate with NumPy) given a tensor that lives off the CPU
  (TypeError) or that requires grad while autograd is on (RuntimeError): `tensor_to_numpy` checks both.
- label-out-of-range: class indices >= the number of outputs in a cross-entropy/NLL loss: IndexError on
  the CPU; on CUDA the loss kernel's device-side assert surfaces as torch.AcceleratorError ("CUDA error:
  device-side assert triggered") at the next synchronising call, so a crash is claimed only where one
  certainly follows (`.item()`, `.cpu()`, `.tolist()`, `.numpy()`, `float()`, `print()` of a CUDA tensor,
  `torch.cuda.synchronize()`), on that line.

- loss-target (rules/losses.judge_ranks) where only ranks and dtypes are known, as for the batches of a
  DataLoader: float class indices into cross-entropy/NLL, BCE targets with another number of axes.

Which forwards are trusted: torch's own leaf modules (Linear, Conv2d, Embedding, LSTM, norms: their
forward hands the input straight to the functional op with the parameters) and `nn.Sequential`, whose
forward calls its children in order; so for a Sequential of torch modules the first parameterized layer
is certainly the first to meet the input, and every layer before it keeps the device (and, from a known
list, the dtype). A custom `forward` may move, cast or ignore its input before any layer sees it, and a
forward pre-hook may too, and a forward hook may replace the output: such models are not judged
(`custom_modules`, `forward_pre_hooks`, `forward_hooks` facts).

The cell is followed statement by statement: tensors and modules the kernel holds (while the cell has not
rebound them and no call could have run user code), what the cell derives from them (`x.to(device)`,
`x.half()`, `model.cuda()`, `model(x)`) and the batches a DataLoader over a TensorDataset yields. Loop
bodies are followed for their first iteration when the loop certainly runs one; a batch's label maximum
is the dataset's, so the label rule also needs the loop to visit every batch with nothing that can leave
the body early. Everything else is unknown, and unknown is silent.

The package: values.py (the rule ids, torch vocabularies and abstract values), kernel.py (abstract values
of the kernel's objects), syntax.py (small AST readers), and the walker in three layers over state.py:
judging.py (preconditions and messages), evaluation.py (names and calls to values), walker.py
(statements and expressions in order).
"""

from __future__ import annotations

from collections.abc import Iterator

from ....models import Finding
from ...context import CellContext
from .values import RULE_DEVICE, RULE_DTYPE, RULE_LABELS, RULE_NUMPY
from .walker import Walker

__all__ = ["RULE_DEVICE", "RULE_DTYPE", "RULE_LABELS", "RULE_NUMPY", "check"]


def check(ctx: CellContext) -> Iterator[Finding]:
    if not any(m.module == "torch" for m in ctx.view.modules.values()):
        return
    walker = Walker(ctx)
    walker.block(ctx.tree.body, True)
    for found in walker.found:
        yield Finding(rule=found.rule, message=found.message, evidence=found.evidence, line=found.line)
