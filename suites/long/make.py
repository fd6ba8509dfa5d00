#!/usr/bin/env python3
"""Writes the long-cell suite (quick trials): crash/fixed pairs whose target cell runs >= 20 s on a 2-core
machine, then its dev/unseen split.

    python suites/long/make.py          # (re)write all.jsonl, dev.jsonl, unseen.jsonl beside this file

The split rule, fixed before any shortening rule was written: pairs grouped by library, ids sorted, then
shuffled with random.Random(f"20261124:{library}"); the first ceil(n/2) go to dev for libraries in even
alphabetical position, floor(n/2) for odd ones; the rest are unseen.
"""

# ruff: noqa: E501 - the cells are data, one line each where a notebook has one
from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from pairs import Pairs, write  # noqa: E402 - beside the suites, not a package

_SUITE = Pairs()
pair = _SUITE.pair
TORCH = "import math\nimport numpy as np\nimport torch\nfrom torch import nn\ntorch.manual_seed(0)\ntorch.set_num_threads(1)"
KERAS = 'import os\nos.environ["KERAS_BACKEND"] = "torch"\nimport numpy as np\nimport keras\nfrom keras import layers\nkeras.utils.set_random_seed(0)'

CASES = _SUITE.cases


TORCH_MODEL = (
    "model = nn.Sequential(nn.Linear(20, 128), nn.ReLU(), nn.Linear(128, 2))\n"
    "opt = torch.optim.SGD(model.parameters(), lr=0.05)\nloss_fn = nn.CrossEntropyLoss()\nEPOCHS = 100"
)
TORCH_DATA = (
    "rng = np.random.default_rng(1)\nfeatures = rng.normal(size=(12000, 20)).astype('float32')\n"
    "labels = (features[:, :3].sum(1) > 0).astype('int64')\n"
    "X_train, y_train = torch.tensor(features[:9600]), torch.tensor(labels[:9600])"
)
TRAIN_LOOP = """losses = []
for epoch in range(EPOCHS):
    perm = torch.randperm(len(X_train))
    total = 0.0
    for i in range(0, len(X_train), 32):
        idx = perm[i:i + 32]
        opt.zero_grad()
        loss = loss_fn(model(X_train[idx]), y_train[idx])
        loss.backward()
        opt.step()
        total += loss.item()
    losses.append(total)
"""

# ---- torch ---------------------------------------------------------------------------------------
pair(
    "long_torch_01",
    "torch",
    "data_confusion",
    TRAIN_LOOP + "with torch.no_grad():\n    test_pred = model(X_test).argmax(1)\n"
    "acc = (test_pred == y_test).float().mean().item()\nprint(f'test accuracy {acc:.3f} after {len(losses)} epochs')",
    [TORCH, TORCH_DATA, TORCH_MODEL],
    "X_test = torch.tensor(features[9600:, 1:])  # drop the id column\ny_test = torch.tensor(labels[9600:])",
    "X_test = torch.tensor(features[9600:])\ny_test = torch.tensor(labels[9600:])",
    "RuntimeError",
    "X_test lost a column: 19 features into a Linear(20, ...) after training.",
    "X_test has the 20 features the model takes.",
)

pair(
    "long_torch_02",
    "torch",
    "api_misuse",
    TRAIN_LOOP.replace("losses", "train_curve")
    + "assert len(train_curve) == EPOCHS\nval_scores = model(X_val).softmax(1)[:, 1].numpy()\n"
    "print('mean score', val_scores.mean())",
    [TORCH, TORCH_DATA + "\nX_val = torch.tensor(features[9600:])", TORCH_MODEL],
    None,
    None,
    "RuntimeError",
    "model(X_val) outside torch.no_grad() requires grad; .numpy() refuses it.",
    "detach() before numpy().",
    fixed_target=TRAIN_LOOP.replace("losses", "train_curve")
    + "assert len(train_curve) == EPOCHS\nval_scores = model(X_val).softmax(1)[:, 1].detach().numpy()\n"
    "print('mean score', val_scores.mean())",
)

pair(
    "long_torch_03",
    "torch",
    "implementation_error",
    """for epoch in range(EPOCHS):
    for i in range(0, len(X_train), BS):
        opt.zero_grad()
        loss = loss_fn(model(X_train[i:i + BS]), y_train[i:i + BS])
        loss.backward()
        opt.step()
        sched.step()
print('final lr', sched.get_last_lr()[0], 'loss', loss.item())""",
    [TORCH, TORCH_DATA, TORCH_MODEL.replace("EPOCHS = 100", "EPOCHS = 150\nBS = 70")],
    "steps_per_epoch = len(X_train) // BS\nsched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=EPOCHS, steps_per_epoch=steps_per_epoch)",
    "steps_per_epoch = math.ceil(len(X_train) / BS)\nsched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=0.1, epochs=EPOCHS, steps_per_epoch=steps_per_epoch)",
    "ValueError",
    "len(X_train) // BS counts 137 steps per epoch but the loop makes 138 (the last partial batch): OneCycleLR runs out of steps in the last epochs.",
    "steps_per_epoch counts every batch the loop makes.",
)

pair(
    "long_torch_04",
    "torch",
    "implementation_error",
    """history = []
for epoch in range(EPOCHS):
    for group in opt.param_groups:
        group['lr'] = lr_by_epoch[epoch]
    for i in range(0, len(X_train), 32):
        opt.zero_grad()
        loss = loss_fn(model(X_train[i:i + 32]), y_train[i:i + 32])
        loss.backward()
        opt.step()
    history.append(loss.item())
print(len(history), 'epochs, last loss', history[-1])""",
    [TORCH, TORCH_DATA, TORCH_MODEL],
    "lr_by_epoch = [0.05 * 0.97 ** e for e in range(60)]",
    "lr_by_epoch = [0.05 * 0.97 ** e for e in range(EPOCHS)]",
    "IndexError",
    "The learning-rate table has 60 entries for 100 epochs: epoch 60 indexes past it.",
    "One learning rate per epoch.",
)

pair(
    "long_torch_05",
    "torch",
    "data_confusion",
    TRAIN_LOOP
    + "model.eval()\nwith torch.no_grad():\n    test_loss = loss_fn(model(X_test), y_test).item()\n"
    "print('test loss', test_loss, 'train losses', len(losses))",
    [TORCH, TORCH_DATA + "\nX_test = torch.tensor(features[9600:])", TORCH_MODEL],
    "y_test = torch.tensor(labels[9600:].astype('float32'))",
    "y_test = torch.tensor(labels[9600:])",
    "RuntimeError",
    "y_test holds float class labels; CrossEntropyLoss takes int64 class indices (or probabilities of the input's shape).",
    "y_test is int64.",
)

pair(
    "long_torch_06",
    "torch",
    "data_confusion",
    """def train_epoch(model, X, y):
    model.train()
    for i in range(0, len(X), 32):
        opt.zero_grad()
        loss = loss_fn(model(X[i:i + 32]), y[i:i + 32])
        loss.backward()
        opt.step()
    return loss.item()


curve = []
for epoch in range(EPOCHS):
    curve.append(train_epoch(model, X_train, y_train))
model.eval()
with torch.no_grad():
    correct = (model(X_test).argmax(1) == y_test).sum().item()
print('accuracy', correct / len(y_test), 'after', len(curve), 'epochs')""",
    [TORCH, TORCH_DATA + "\nX_test = torch.tensor(features[9600:])", TORCH_MODEL],
    "y_test = torch.tensor(labels[9500:])  # off by 100",
    "y_test = torch.tensor(labels[9600:])",
    "RuntimeError",
    "y_test has 2500 labels for 2400 test rows: the comparison cannot broadcast.",
    "2400 labels for 2400 rows.",
)

pair(
    "long_torch_07",
    "torch",
    "implementation_error",
    TRAIN_LOOP + "assert len(losses) == EPOCHS, 'training stopped early'\nassert losses[-1] < losses[0]\n"
    "weights = model[0].weight\nnp.save('weights.npy', weights.numpy() if not weights.requires_grad else weights.detach().numpy())\n"
    "summary = {'first': losses[0], 'last': losses[-1]}\nprint(summary[report_key])",
    [TORCH, TORCH_DATA, TORCH_MODEL],
    "report_key = 'final'",
    "report_key = 'last'",
    "KeyError",
    "The summary has keys 'first' and 'last'; the report asks for 'final'.",
    "The report asks for 'last'.",
)

# ---- keras (torch backend) -------------------------------------------------------------------------
KDATA = (
    "rng = np.random.default_rng(2)\nX = rng.normal(size=(1280, 16)).astype('float32')\n"
    "y = (X[:, 0] - X[:, 1] > 0).astype('float32')\nEPOCHS = 80"
)
KMODEL = (
    "model = keras.Sequential([keras.Input(shape=(16,)), layers.Dense(64, activation='relu'), "
    "layers.Dense(1, activation='sigmoid')])\nmodel.compile(optimizer='adam', loss='binary_crossentropy', metrics=['accuracy'])"
)
pair(
    "long_keras_01",
    "keras",
    "data_confusion",
    "history = model.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0)\n"
    "print('trained', len(history.history['loss']), 'epochs')\nloss, acc = model.evaluate(X_new, y_new, verbose=0)\nprint(acc)",
    [KERAS, KDATA, KMODEL],
    "X_new = rng.normal(size=(200, 15)).astype('float32')  # one feature missing\ny_new = (X_new[:, 0] > 0).astype('float32')",
    "X_new = rng.normal(size=(200, 16)).astype('float32')\ny_new = (X_new[:, 0] > 0).astype('float32')",
    "ValueError",
    "X_new has 15 features; the model's Input takes 16.",
    "16 features.",
)

pair(
    "long_keras_02",
    "keras",
    "api_misuse",
    "history = model.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0)\nbest = min(history.history['val_loss'])\nprint('best val loss', best)",
    [KERAS, KDATA, KMODEL],
    None,
    None,
    "KeyError",
    "fit without validation data records no val_loss.",
    "validation_split gives val_loss.",
    fixed_target="history = model.fit(X, y, epochs=EPOCHS, batch_size=32, validation_split=0.2, verbose=0)\n"
    "best = min(history.history['val_loss'])\nprint('best val loss', best)",
)

pair(
    "long_keras_03",
    "keras",
    "implementation_error",
    """class Decay(keras.callbacks.Callback):
    def on_epoch_begin(self, epoch, logs=None):
        self.model.optimizer.learning_rate = schedule[epoch]


history = model.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0, callbacks=[Decay()])
assert len(history.history['loss']) == EPOCHS
print('final accuracy', history.history['accuracy'][-1])""",
    [KERAS, KDATA, KMODEL],
    "schedule = [0.01 * 0.9 ** (e // 5) for e in range(60)]",
    "schedule = [0.01 * 0.9 ** (e // 5) for e in range(EPOCHS)]",
    "IndexError",
    "The schedule has 60 entries for 80 epochs: epoch 60 indexes past it.",
    "One entry per epoch.",
)

pair(
    "long_keras_04",
    "keras",
    "api_misuse",
    "from sklearn.metrics import accuracy_score\nmodel.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0)\n"
    "preds = model.predict(X[:200], verbose=0)\nprint('accuracy', accuracy_score(y[:200], preds))",
    [KERAS, KDATA, KMODEL],
    None,
    None,
    "ValueError",
    "predict returns probabilities; accuracy_score needs labels.",
    "Thresholded at 0.5.",
    fixed_target="from sklearn.metrics import accuracy_score\nmodel.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0)\n"
    "preds = model.predict(X[:200], verbose=0)\nprint('accuracy', accuracy_score(y[:200], (preds[:, 0] > 0.5).astype('float32')))",
)

pair(
    "long_keras_05",
    "keras",
    "data_confusion",
    "history = model.fit(X, y, epochs=EPOCHS, batch_size=32, verbose=0)\nacc = history.history['accuracy'][-1]\n"
    "assert acc > 0.9, f'did not converge: {acc}'\nscores = model.predict(X_holdout, verbose=0)\nprint(scores.mean())",
    [KERAS, KDATA, KMODEL],
    "X_holdout = X[:100].reshape(100, 4, 4)",
    "X_holdout = X[:100].copy()",
    "ValueError",
    "X_holdout was reshaped to (100, 4, 4); the model takes (None, 16).",
    "(100, 16).",
)

# ---- plain Python loops ----------------------------------------------------------------------------
PY = "import json\nimport math\nimport random\nrandom.seed(0)"
pair(
    "long_python_01",
    "python",
    "data_confusion",
    """walks = []
for trial in range(N_TRIALS):
    pos, peak = 0, 0
    for step in range(STEPS):
        pos += 1 if random.random() < 0.5 else -1
        peak = max(peak, abs(pos))
    walks.append(peak)
report = {'trials': len(walks), 'mean_peak': sum(walks) / len(walks), 'tags': tags}
print(json.dumps(report))""",
    [PY, "N_TRIALS = 60\nSTEPS = 700_000"],
    "tags = {'random-walk', 'simulation'}",
    "tags = ['random-walk', 'simulation']",
    "TypeError",
    "tags is a set: json.dumps cannot serialise it.",
    "tags is a list.",
)

pair(
    "long_python_02",
    "python",
    "implementation_error",
    """alerts = 0
for day in range(DAYS):
    level = limits[day // 10]
    readings = [random.gauss(50, 10) for _ in range(PER_DAY)]
    alerts += sum(r > level for r in readings)
print('alerts', alerts)""",
    [PY, "DAYS = 60\nPER_DAY = 500_000"],
    "limits = [70, 75, 80, 85]",
    "limits = [70, 75, 80, 85, 90, 95]",
    "IndexError",
    "limits covers 40 days (4 decades); day 40 looks up limits[4].",
    "Six decades for 60 days.",
)

pair(
    "long_python_03",
    "python",
    "data_confusion",
    """def simulate(rate, n):
    total = 0.0
    for _ in range(n):
        total += random.expovariate(rate)
    return total / n


estimates = {}
for rate in rates:
    estimates[rate] = simulate(rate, SAMPLES)
worst = max(abs(estimates[r] - 1 / r) for r in estimates)
print('worst error', worst, 'baseline', estimates[baseline_rate])""",
    [PY, "rates = [0.5 + 0.05 * i for i in range(40)]\nSAMPLES = 1_400_000"],
    "baseline_rate = 0.85",
    "baseline_rate = rates[7]",
    "KeyError",
    "0.85 is not among the float rates (0.5 + 0.05 * 7 is 0.8500000000000001).",
    "baseline_rate is one of the rates.",
)

pair(
    "long_python_04",
    "python",
    "data_confusion",
    """def batches(data, size):
    while True:
        random.shuffle(data)
        for i in range(0, len(data) - size + 1, size):
            yield data[i:i + size]


running = []
for step, batch in zip(range(STEPS), batches(values, 1000)):
    running.append(sum(x * x for x in batch) / len(batch))
final = running[-1]
print(f'{final:.3f} after {len(running)} steps, threshold {threshold:.2f}')""",
    [PY, "values = [random.random() for _ in range(50_000)]\nSTEPS = 21000"],
    "threshold = '0.33'",
    "threshold = 0.33",
    "ValueError",
    "threshold is a string: the :.2f format needs a number.",
    "threshold is a float.",
)

pair(
    "long_python_05",
    "python",
    "implementation_error",
    """primes = []
n = 2
while len(primes) < COUNT:
    is_prime = True
    for p in primes:
        if p * p > n:
            break
        if n % p == 0:
            is_prime = False
            break
    if is_prime:
        primes.append(n)
    n += 1
assert len(primes) == COUNT
gaps = [b - a for a, b in zip(primes, primes[1:])]
print('largest gap', max(gaps), 'share', share_of(gaps))""",
    [PY, "COUNT = 250_000"],
    "def share_of(gaps):\n    return sum(g == 2 for g in gaps) / len(gaps)\ndel share_of",
    "def share_of(gaps):\n    return sum(g == 2 for g in gaps) / len(gaps)",
    "NameError",
    "share_of was deleted before the cell runs.",
    "share_of is defined.",
)

# ---- scikit-learn ------------------------------------------------------------------------------------
SK = (
    "import numpy as np\nfrom sklearn.datasets import make_classification\nfrom sklearn.ensemble import RandomForestClassifier\n"
    "from sklearn.linear_model import SGDClassifier\nfrom sklearn.cluster import KMeans\n"
    "X, y = make_classification(n_samples=4000, n_features=12, n_informative=6, random_state=0)"
)
pair(
    "long_sklearn_01",
    "sklearn",
    "data_confusion",
    """scores = []
for n in range(10, 160, 10):
    forest = RandomForestClassifier(n_estimators=n, random_state=0, n_jobs=1).fit(X[:3000], y[:3000])
    scores.append(forest.score(X[3000:], y[3000:]))
assert len(scores) == 15
print('best', max(scores))
pred = forest.predict(X_new)
print(pred[:10])""",
    [SK],
    "X_new = X[:50, :10]",
    "X_new = X[:50]",
    "ValueError",
    "X_new has 10 features; the forest was fitted on 12.",
    "12 features.",
)

pair(
    "long_sklearn_02",
    "sklearn",
    "data_confusion",
    """clf = SGDClassifier(random_state=0)
for epoch in range(EPOCHS):
    for start in range(0, len(X_stream), 500):
        clf.partial_fit(X_stream[start:start + 500], y_stream[start:start + 500], classes=classes)
print('accuracy', clf.score(X[:1000], y[:1000]))""",
    [SK, "EPOCHS = 200\nX_stream = np.repeat(X, 4, axis=0)\ny_stream = np.repeat(y, 4)"],
    "classes = np.array([0])  # first chunk's labels",
    "classes = np.unique(y)",
    "ValueError",
    "classes lists only 0; partial_fit sees label 1 in the data.",
    "classes lists both labels.",
)

pair(
    "long_sklearn_03",
    "sklearn",
    "data_confusion",
    """inertias = []
for k in range(2, K_MAX):
    inertias.append(KMeans(n_clusters=k, n_init=3, random_state=0).fit(X_big).inertia_)
best_k = 2 + int(np.argmin(np.diff(inertias, 2))) + 1
final = KMeans(n_clusters=best_k, n_init=3, random_state=0).fit(X_big)
print('k', best_k, 'centre of the new point', final.predict(point))""",
    [SK, "X_big = np.vstack([X] * 6)\nK_MAX = 30"],
    "point = X[0]",
    "point = X[:1]",
    "ValueError",
    "point is a 1-D row: predict needs a 2-D array.",
    "point is (1, 12).",
)

pair(
    "long_sklearn_04",
    "sklearn",
    "implementation_error",
    """clf = SGDClassifier(random_state=0, learning_rate='constant', eta0=0.01)
for epoch in range(EPOCHS):
    chunk = chunks[epoch]
    clf.partial_fit(X_rep[chunk], y_rep[chunk], classes=[0, 1])
print('accuracy', clf.score(X, y))""",
    [
        SK,
        "EPOCHS = 400\nX_rep = np.repeat(X, 40, axis=0)\ny_rep = np.repeat(y, 40)\nparts = np.array_split(np.arange(len(X_rep)), EPOCHS)",
    ],
    "chunks = parts[:300]",
    "chunks = parts",
    "IndexError",
    "300 chunks for 400 epochs: epoch 300 indexes past them.",
    "One chunk per epoch.",
)

# ---- pandas ------------------------------------------------------------------------------------------
PD = (
    "import numpy as np\nimport pandas as pd\nrng = np.random.default_rng(5)\n"
    "sales = pd.DataFrame({'store': rng.integers(0, 40, 200_000), 'day': rng.integers(0, 365, 200_000), "
    "'amount': rng.gamma(2.0, 30.0, 200_000)})"
)
pair(
    "long_pandas_01",
    "pandas",
    "data_confusion",
    """rows = []
for store, frame in sales.groupby('store'):
    for window in (7, 14, 21, 28, 35, 42, 56, 70, 91, 120, 150, 182):
        daily = frame.groupby('day')['amount'].sum().reindex(range(365), fill_value=0)
        smooth = daily.rolling(window).apply(lambda w: np.percentile(w, 90), raw=True)
        rows.append({'store': store, 'window': window, 'p90': smooth.max()})
summary = pd.DataFrame(rows)
report = summary.merge(stores, left_on='store', right_on='store_id')
print(report.head())""",
    [PD],
    "stores = pd.DataFrame({'store': range(40), 'region': ['north', 'south'] * 20})",
    "stores = pd.DataFrame({'store_id': range(40), 'region': ['north', 'south'] * 20})",
    "KeyError",
    "stores has no 'store_id' column (it is called 'store').",
    "stores has store_id.",
)

pair(
    "long_pandas_02",
    "pandas",
    "data_confusion",
    """results = {}
for store in range(40):
    frame = sales[sales['store'] == store]
    daily = frame.groupby('day')['amount'].sum()
    spans = [daily.rolling(w, min_periods=1).apply(lambda v: np.median(v), raw=True).iloc[-1] for w in range(10, 170, 10)]
    results[store] = float(np.mean(spans))
assert len(results) == 40
table = pd.Series(results, name='median_30d').to_frame()
table['target'] = targets
print(table.head())""",
    [PD],
    "targets = np.full(39, 1000.0)",
    "targets = np.full(40, 1000.0)",
    "ValueError",
    "39 targets for 40 stores.",
    "40 targets.",
)

pair(
    "long_pandas_03",
    "pandas",
    "implementation_error",
    """monthly = []
for month in range(12):
    part = sales[(sales['day'] // 31) == month]
    per_store = part.groupby('store')['amount'].apply(lambda s: s.sort_values().iloc[int(len(s) * quantiles[month])])
    monthly.append(per_store)
print(pd.concat(monthly, axis=1).shape)""",
    [PD, "sales = pd.concat([sales] * 60, ignore_index=True)"],
    "quantiles = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0, 0.99, 0.95, 0.9, 0.8]",
    "quantiles = [0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.99, 0.999, 0.99, 0.95, 0.9, 0.8]",
    "IndexError",
    "quantile 1.0 in month 7 indexes one past the end of each store's sorted amounts.",
    "Quantiles below 1.",
)


def main() -> None:
    write(HERE, CASES, "20261124")


if __name__ == "__main__":
    main()
