# ruff: noqa: E501  (the cases' cells are kept as a notebook would write them)
"""Writes cases.jsonl: the forecast suite (`crane-bench forecast`). Run: python suites/forecast/make.py

Each case: id, split ("dev" | "blind"), setup (run first in a fresh kernel), cell (asked for a quick trial,
then run for real), note; `expect_oom` (true/false) on the memory cases, and `real: false` on those never
run for real (their truth is arithmetic, in the note). The blind cases were written before the bench ran
on any of them, and not changed after.
"""

from __future__ import annotations

import json
from pathlib import Path

TORCH_MLP = """import torch
from torch import nn
torch.manual_seed(0)
loss_fn = nn.CrossEntropyLoss()
"""

DEV = [
    {
        "id": "torch_dataloader",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(20000, 64)
y = (X[:, :4].sum(1) > 0).long()
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Linear(64, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2))
opt = torch.optim.Adam(model.parameters(), 1e-3)""",
        "cell": """for epoch in range(30):
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()""",
        "note": "epochs x batches of a DataLoader (nested: both cut)",
    },
    {
        "id": "torch_slices",
        "setup": TORCH_MLP
        + """X = torch.randn(60000, 128)
y = torch.randint(0, 10, (60000,))
model = nn.Sequential(nn.Linear(128, 512), nn.ReLU(), nn.Linear(512, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)""",
        "cell": """for epoch in range(5):
    for i in range(0, len(X), 32):
        xb, yb = X[i:i + 32], y[i:i + 32]
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()""",
        "note": "epochs x slices of a tensor by range(0, n, 32)",
    },
    {
        "id": "keras_fit",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(0)
X = rng.normal(size=(20000, 32)).astype('float32')
y = (X[:, :3].sum(1) > 0).astype('int32')
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(128, activation='relu'),
                          keras.layers.Dense(64, activation='relu'), keras.layers.Dense(2, activation='softmax')])
model.compile('adam', 'sparse_categorical_crossentropy', metrics=['accuracy'])""",
        "cell": "history = model.fit(X, y, epochs=20, batch_size=64, verbose=0)",
        "note": "Keras fit (TensorFlow backend): 20 epochs x 313 steps",
    },
    {
        "id": "gridsearch_svc",
        "setup": """from sklearn.datasets import make_classification
from sklearn.model_selection import GridSearchCV
from sklearn.svm import SVC
X, y = make_classification(n_samples=3000, n_features=20, random_state=0)""",
        "cell": """search = GridSearchCV(SVC(), {'C': [0.1, 1, 10, 100], 'gamma': ['scale', 0.01, 0.1]}, cv=5)
search.fit(X, y)
best = search.best_params_""",
        "note": "GridSearchCV: 12 candidates x 5 folds + refit",
    },
    {
        "id": "pandas_apply",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(0)
df = pd.DataFrame({'a': rng.normal(size=1_200_000), 'b': rng.integers(0, 100, 1_200_000),
                   'c': rng.choice(['x', 'y', 'z'], 1_200_000)})
def score(row):
    v = row['a'] * 2
    if row['c'] == 'x':
        v += row['b'] ** 0.5
    return v""",
        "cell": "df['score'] = df.apply(score, axis=1)",
        "note": "DataFrame.apply of a Python function over 1.2M rows",
    },
    {
        "id": "sklearn_gbc_fit",
        "setup": """from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier
X, y = make_classification(n_samples=20000, n_features=20, random_state=0)""",
        "cell": "clf = GradientBoostingClassifier(n_estimators=200, random_state=0).fit(X, y)",
        "note": "one long scikit-learn fit (200 boosting stages)",
    },
    {
        "id": "while_counter",
        "setup": "import math",
        "cell": """i = 0
total = 0.0
while i < 40_000_000:
    total += math.sin(i) * math.cos(i)
    i += 1""",
        "note": "a while loop with a counter against a bound (length unknown to the trial)",
    },
    {
        "id": "nested_triangular",
        "setup": "n = 14000",
        "cell": """acc = 0
for i in range(n):
    for j in range(i):
        acc += (i ^ j) & 7""",
        "note": "for i in range(n): for j in range(i): the inner length grows (n^2/2 iterations)",
    },
    {
        "id": "grow_arrays",
        "setup": "import numpy as np",
        "cell": """keep = []
for i in range(120):
    a = np.random.default_rng(i).normal(size=2_500_000)
    keep.append(a * 2)""",
        "note": "keeps a 20 MB array per iteration: 2.4 GB, fits",
        "expect_oom": False,
    },
    {
        "id": "grow_autograd",
        "setup": """import torch
torch.manual_seed(0)
W = torch.randn(1024, 1024, requires_grad=True)""",
        "cell": """losses = []
for step in range(150):
    x = torch.randn(2048, 1024)
    h = torch.tanh(x @ W)
    loss = (h ** 2).mean()
    losses.append(loss)  # keeps each step's graph: x, tanh(x @ W), h saved for backward""",
        "note": "appends losses with their autograd graph: ~24 MB per step, ~3.6 GB, fits",
        "expect_oom": False,
    },
    {
        "id": "oom_numpy_ones",
        "setup": "import numpy as np",
        "cell": """keep = []
for i in range(400):
    keep.append(np.ones(25_000_000))  # 200 MB""",
        "note": "400 x 200 MB = 80 GB on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
    {
        "id": "oom_torch_graph",
        "setup": """import torch
w = torch.ones(2048, requires_grad=True)""",
        "cell": """outs = []
for step in range(300):
    x = torch.randn(16384, 2048)  # 128 MB
    outs.append(x * w)  # 128 MB out, x kept for backward""",
        "note": "300 x 256 MB = 75 GB: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]

BLIND = [
    {
        "id": "b_torch_cnn_loader",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(4000, 1, 28, 28)
y = torch.randint(0, 10, (4000,))
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
model = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 13 * 13, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.01)""",
        "cell": """history = []
for epoch in range(6):
    running = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
        running += loss.item()
    history.append(running)""",
        "note": "a small CNN over a DataLoader of images",
    },
    {
        "id": "b_torch_zip_split",
        "setup": TORCH_MLP
        + """X = torch.randn(50000, 100)
y = torch.randint(0, 5, (50000,))
model = nn.Sequential(nn.Linear(100, 256), nn.ReLU(), nn.Linear(256, 5))
opt = torch.optim.Adam(model.parameters(), 1e-3)""",
        "cell": """for epoch in range(8):
    for xb, yb in zip(X.split(128), y.split(128)):
        opt.zero_grad()
        loss_fn(model(xb), yb).backward()
        opt.step()""",
        "note": "batches from zip(X.split(128), y.split(128)): an iterable without len",
    },
    {
        "id": "b_keras_validation",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(1)
X = rng.normal(size=(15000, 20)).astype('float32')
y = (X[:, 0] * X[:, 1] > 0).astype('float32')
model = keras.Sequential([keras.Input((20,)), keras.layers.Dense(64, activation='relu'),
                          keras.layers.Dense(1, activation='sigmoid')])
model.compile('adam', 'binary_crossentropy')""",
        "cell": "hist = model.fit(X, y, epochs=15, batch_size=32, validation_split=0.2, verbose=0)",
        "note": "Keras fit with a validation split",
    },
    {
        "id": "b_groupby_polyfit",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(2)
df = pd.DataFrame({'store': rng.integers(0, 3000, 600000), 't': rng.random(600000),
                   'sales': rng.gamma(2.0, 10.0, 600000)})""",
        "cell": """fits = {}
for key, g in df.groupby('store'):
    fits[key] = np.polyfit(g['t'], g['sales'], 3)""",
        "note": "a loop over 3000 groups of a groupby, a polyfit each",
    },
    {
        "id": "b_cross_val_forest",
        "setup": """from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score
X, y = make_classification(n_samples=8000, n_features=30, random_state=3)""",
        "cell": "scores = cross_val_score(RandomForestClassifier(n_estimators=150, random_state=0), X, y, cv=5)",
        "note": "cross_val_score of a random forest, 5 folds",
    },
    {
        "id": "b_frames_then_concat",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(4)""",
        "cell": """frames = {}
for i in range(80):
    frames[i] = pd.DataFrame(rng.normal(size=(200000, 10)))
big = pd.concat(frames.values())""",
        "note": "keeps a 16 MB frame per iteration (1.3 GB), then concatenates them all (a peak after the loop)",
    },
    {
        "id": "b_while_gradient",
        "setup": """import numpy as np
rng = np.random.default_rng(5)
A = rng.normal(size=(50, 50))
A = A @ A.T / 50 + np.eye(50)
b = rng.normal(size=50)""",
        "cell": """x = np.zeros(50)
err, it = 1.0, 0
while it < 1_500_000 and err > 0:
    g = A @ x - b
    x -= 0.001 * g
    err = float(g @ g)
    it += 1""",
        "note": "gradient steps in a while loop with a counter bound",
    },
    {
        "id": "b_nested_shrinking",
        "setup": "n = 9000",
        "cell": """pairs = 0
for i in range(n):
    for j in range(i, n):
        pairs += (i * j) % 3 == 0""",
        "note": "for i in range(n): for j in range(i, n): the inner length shrinks",
    },
]

# A second blind split, written on 2026-11-28 after the forecast's `while` counters and GPU counters,
# before the bench ran on any of it; measured once.
BLIND2 = [
    {
        "id": "b2_torch_lstm_loader",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(3000, 20, 16)
y = torch.randint(0, 3, (3000,))
loader = DataLoader(TensorDataset(X, y), batch_size=32, shuffle=True)

class Tagger(nn.Module):
    def __init__(self):
        super().__init__()
        self.rnn = nn.LSTM(16, 64, batch_first=True)
        self.head = nn.Linear(64, 3)

    def forward(self, x):
        out, _ = self.rnn(x)
        return self.head(out[:, -1])

model = Tagger()
opt = torch.optim.Adam(model.parameters(), 1e-3)""",
        "cell": """losses = []
for epoch in range(12):
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(model(xb), yb)
        loss.backward()
        opt.step()
    losses.append(loss.item())""",
        "note": "an LSTM over a DataLoader of sequences",
    },
    {
        "id": "b2_keras_dense",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(11)
X = rng.normal(size=(20000, 32)).astype('float32')
y = rng.integers(0, 4, 20000)
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(128, activation='relu'),
                          keras.layers.Dense(4, activation='softmax')])
model.compile('adam', 'sparse_categorical_crossentropy')""",
        "cell": "model.fit(X, y, epochs=20, batch_size=64, verbose=0)",
        "note": "Keras fit, 20 epochs of 313 batches",
    },
    {
        "id": "b2_while_countdown",
        "setup": "remaining = 25_000_000",
        "cell": """acc = 0
while remaining > 0:
    acc += remaining % 7
    remaining -= 1""",
        "note": "a while loop counting down to 0 with `>`",
    },
    {
        "id": "b2_apply_rows",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(12)
df = pd.DataFrame({'price': rng.gamma(3.0, 20.0, 500000), 'qty': rng.integers(1, 9, 500000),
                   'kind': rng.choice(['a', 'b', 'c'], 500000)})

def total(row):
    rate = 0.2 if row['kind'] == 'a' else 0.1
    return row['price'] * row['qty'] * (1 + rate)""",
        "cell": "df['total'] = df.apply(total, axis=1)",
        "note": "a row-wise apply of a Python function over 500,000 rows",
    },
    {
        "id": "b2_keep_arrays",
        "setup": """import numpy as np
rng = np.random.default_rng(13)""",
        "cell": """kept = []
for i in range(150):
    a = rng.normal(size=1_000_000)
    kept.append(np.sort(a))""",
        "note": "keeps a sorted 8 MB array per iteration: 1.2 GB",
    },
    {
        "id": "b2_nested_growing",
        "setup": "n = 7000",
        "cell": """s = 0
for i in range(n):
    for j in range(i):
        s += (i ^ j) & 1""",
        "note": "for i in range(n): for j in range(i): the inner length grows",
    },
    {
        "id": "b2_boosting_fit",
        "setup": """from sklearn.datasets import make_regression
from sklearn.ensemble import GradientBoostingRegressor
X, y = make_regression(n_samples=20000, n_features=20, noise=5.0, random_state=14)""",
        "cell": "gbr = GradientBoostingRegressor(n_estimators=200, random_state=0).fit(X, y)",
        "note": "a gradient-boosting regressor of 200 trees",
    },
    {
        "id": "b2_word_counts",
        "setup": """import re
docs = [f'the model {i % 97} saw batch {i % 13} and the loss fell by {i % 7} points' for i in range(600000)]""",
        "cell": """counts = {}
for i, d in enumerate(docs):
    for w in re.findall(r'[a-z]+', d):
        counts[w] = counts.get(w, 0) + 1""",
        "note": "a loop over enumerate() of 600,000 strings, a regex each",
    },
    {
        "id": "b2_oom_float_chunks",
        "setup": """import numpy as np""",
        "cell": """chunks = []
for k in range(300):
    chunks.append(np.full(16_000_000, float(k)))  # 128 MB each""",
        "note": "300 x 128 MB = 38 GB on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# A third blind split, written on 2026-11-29 after memory reads left the loops' clock, `while` loops were
# counted with no clock between their checks and the trial's counting cost a run's start apart: not run
# before its one measured run.
BLIND3 = [
    {
        "id": "b3_torch_conv_loader",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(4000, 1, 28, 28)
y = torch.randint(0, 10, (4000,))
loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
net = nn.Sequential(nn.Conv2d(1, 8, 3), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(8 * 13 * 13, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.05)""",
        "cell": """for epoch in range(6):
    for xb, yb in loader:
        opt.zero_grad()
        loss_fn(net(xb), yb).backward()
        opt.step()""",
        "note": "a small convolutional net over a DataLoader of images, 6 epochs of 63 batches",
    },
    {
        "id": "b3_torch_manual_batches",
        "setup": """import torch
from torch import nn
torch.manual_seed(3)
X = torch.randn(60000, 32)
y = X @ torch.randn(32, 1) + 0.1 * torch.randn(60000, 1)
reg = nn.Sequential(nn.Linear(32, 128), nn.Tanh(), nn.Linear(128, 1))
opt = torch.optim.Adam(reg.parameters(), 1e-3)""",
        "cell": """bs = 256
for epoch in range(8):
    perm = torch.randperm(len(X))
    for start in range(0, len(X), bs):
        idx = perm[start:start + bs]
        opt.zero_grad()
        loss = ((reg(X[idx]) - y[idx]) ** 2).mean()
        loss.backward()
        opt.step()""",
        "note": "regression over shuffled index slices with range(0, len(X), bs), 8 epochs",
    },
    {
        "id": "b3_keras_wide",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(21)
X = rng.normal(size=(30000, 64)).astype('float32')
y = (X[:, 0] > 0).astype('float32')
model = keras.Sequential([keras.Input((64,)), keras.layers.Dense(256, activation='relu'),
                          keras.layers.Dropout(0.2), keras.layers.Dense(1, activation='sigmoid')])
model.compile('rmsprop', 'binary_crossentropy')""",
        "cell": "model.fit(X, y, epochs=12, batch_size=128, verbose=0)",
        "note": "Keras fit, 12 epochs of 235 batches, with dropout",
    },
    {
        "id": "b3_random_search",
        "setup": """from sklearn.datasets import make_classification
from sklearn.model_selection import RandomizedSearchCV
from sklearn.tree import DecisionTreeClassifier
X, y = make_classification(n_samples=12000, n_features=30, random_state=5)""",
        "cell": """search = RandomizedSearchCV(DecisionTreeClassifier(random_state=0),
                            {'max_depth': list(range(2, 30)), 'min_samples_leaf': [1, 2, 5, 10, 20]},
                            n_iter=40, cv=5, random_state=0)
search.fit(X, y)""",
        "note": "a randomized search of 40 decision trees x 5 folds",
    },
    {
        "id": "b3_series_map_strings",
        "setup": """import pandas as pd
s = pd.Series([f'user_{i % 5000}@example{i % 17}.com' for i in range(1_500_000)])""",
        "cell": "domains = s.map(lambda v: v.split('@')[1].split('.')[0].upper())",
        "note": "Series.map of a Python function over 1.5 million strings",
    },
    {
        "id": "b3_while_numpy_steps",
        "setup": """import numpy as np
rng = np.random.default_rng(8)
A = rng.normal(size=(300, 300)) / 30
v = rng.normal(size=300)""",
        "cell": """step = 0
while step < 40_000:
    v = np.tanh(A @ v)
    step += 1""",
        "note": "a while loop of 40,000 matrix-vector steps, its counter against a bound",
    },
    {
        "id": "b3_nested_shrinking",
        "setup": "n = 9000",
        "cell": """pairs = 0
for i in range(n):
    for j in range(i, n):
        pairs += (i * j) % 3 == 0""",
        "note": "for i in range(n): for j in range(i, n): the inner length shrinks",
    },
    {
        "id": "b3_records_list",
        "setup": "import random",
        "cell": """records = []
for i in range(3_000_000):
    records.append({'id': i, 'score': random.random(), 'tag': 'abcdefgh'[i % 8]})""",
        "note": "a list of 3 million small dicts: about 1 GB of Python objects, fits",
    },
    {
        "id": "b3_oom_torch_list",
        "setup": "import torch",
        "cell": """kept = []
for k in range(200):
    kept.append(torch.ones(40_000_000) * k)  # 160 MB each""",
        "note": "200 x 160 MB = 32 GB of tensors on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# A fourth blind split, written on 2026-11-29 after cells the trial ran whole had their counting taken
# off and row-wise calls their counted function's: not run before its one measured run.
BLIND4 = [
    {
        "id": "b4_torch_gru_slices",
        "setup": TORCH_MLP
        + """X = torch.randn(20000, 30, 32)
y = torch.randint(0, 4, (20000,))

class Reader(nn.Module):
    def __init__(self):
        super().__init__()
        self.gru = nn.GRU(32, 64, batch_first=True)
        self.out = nn.Linear(64, 4)

    def forward(self, x):
        h, _ = self.gru(x)
        return self.out(h[:, -1])

reader = Reader()
opt = torch.optim.Adam(reader.parameters(), 1e-3)""",
        "cell": """for epoch in range(5):
    for i in range(0, len(X), 64):
        opt.zero_grad()
        loss = loss_fn(reader(X[i:i + 64]), y[i:i + 64])
        loss.backward()
        opt.step()""",
        "note": "a GRU over slices of 64 sequences, 5 epochs of 313",
    },
    {
        "id": "b4_torch_autoencoder_loader",
        "setup": """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(4)
data = torch.randn(30000, 64)
loader = DataLoader(TensorDataset(data), batch_size=128, shuffle=True)
ae = nn.Sequential(nn.Linear(64, 32), nn.ReLU(), nn.Linear(32, 8), nn.ReLU(), nn.Linear(8, 32), nn.ReLU(),
                   nn.Linear(32, 64))
opt = torch.optim.Adam(ae.parameters(), 1e-3)""",
        "cell": """for epoch in range(15):
    for (xb,) in loader:
        opt.zero_grad()
        loss = ((ae(xb) - xb) ** 2).mean()
        loss.backward()
        opt.step()""",
        "note": "an autoencoder over a DataLoader of one tensor, 15 epochs of 235 batches",
    },
    {
        "id": "b4_keras_cnn",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(31)
X = rng.random((8000, 28, 28, 1)).astype('float32')
y = rng.integers(0, 10, 8000)
model = keras.Sequential([keras.Input((28, 28, 1)), keras.layers.Conv2D(16, 3, activation='relu'),
                          keras.layers.MaxPooling2D(), keras.layers.Flatten(),
                          keras.layers.Dense(10, activation='softmax')])
model.compile('adam', 'sparse_categorical_crossentropy')""",
        "cell": "model.fit(X, y, epochs=4, batch_size=64, verbose=0)",
        "note": "a Keras convolutional net, 4 epochs of 125 batches",
    },
    {
        "id": "b4_cross_val_forest",
        "setup": """from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import cross_val_score
X, y = make_classification(n_samples=10000, n_features=20, random_state=9)""",
        "cell": "scores = cross_val_score(RandomForestClassifier(n_estimators=100, random_state=0), X, y, cv=5)",
        "note": "cross-validated random forest, 5 folds of 100 trees",
    },
    {
        "id": "b4_groupby_apply",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(41)
sales = pd.DataFrame({'store': rng.integers(0, 60000, 400000), 'amount': rng.gamma(2.0, 30.0, 400000)})""",
        "cell": "summary = sales.groupby('store').apply(lambda g: g['amount'].max() - g['amount'].min())",
        "note": "groupby().apply of a Python function over 60,000 groups",
    },
    {
        "id": "b4_while_dot_products",
        "setup": """import numpy as np
rng = np.random.default_rng(5)
acc = 0.0""",
        "cell": """k = 0
while k < 2_000_000:
    x = rng.random(50)
    acc += x @ x
    k += 1""",
        "note": "a while loop of 2 million small numpy draws and dot products",
    },
    {
        "id": "b4_nested_square",
        "setup": "n = 6000",
        "cell": """acc = 0
for i in range(n):
    for j in range(n):
        acc += i * j % 5""",
        "note": "for i in range(n): for j in range(n): 36 million cheap inner iterations",
    },
    {
        "id": "b4_string_rows",
        "setup": "",
        "cell": """lines = []
for i in range(8_000_000):
    lines.append(f"row {i}: {i * 0.5:.3f}")""",
        "note": "8 million formatted strings kept in a list",
    },
    {
        "id": "b4_oom_float_lists",
        "setup": "",
        "cell": """rows = []
for i in range(400):
    rows.append([0.5] * 10_000_000)  # 80 MB each""",
        "note": "400 x 80 MB lists = 32 GB on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# A fifth blind split, written on 2026-11-29 after a for loop's runs that fit were handed to C iterators:
# not run before its one measured run.
BLIND5 = [
    {
        "id": "b5_torch_mlp_big_batches",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
X = torch.randn(50000, 40)
y = (X[:, 0] * X[:, 1] > 0).long()
loader = DataLoader(TensorDataset(X, y), batch_size=256, shuffle=True)
mlp = nn.Sequential(nn.Linear(40, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 2))
opt = torch.optim.SGD(mlp.parameters(), lr=0.1, momentum=0.9)""",
        "cell": """history = []
for epoch in range(20):
    total = 0.0
    for xb, yb in loader:
        opt.zero_grad()
        loss = loss_fn(mlp(xb), yb)
        loss.backward()
        opt.step()
        total += loss.item()
    history.append(total)""",
        "note": "an MLP over a DataLoader of 196 batches of 256, 20 epochs",
    },
    {
        "id": "b5_torch_cnn_slices",
        "setup": TORCH_MLP
        + """images = torch.randn(6000, 3, 32, 32)
labels = torch.randint(0, 10, (6000,))
cnn = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1),
                    nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
opt = torch.optim.Adam(cnn.parameters(), 1e-3)""",
        "cell": """for epoch in range(3):
    for s in range(0, len(images), 100):
        opt.zero_grad()
        loss_fn(cnn(images[s:s + 100]), labels[s:s + 100]).backward()
        opt.step()""",
        "note": "a two-layer CNN over slices of 100 images, 3 epochs of 60",
    },
    {
        "id": "b5_keras_lstm",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(51)
X = rng.normal(size=(6000, 20, 8)).astype('float32')
y = rng.integers(0, 2, 6000)
model = keras.Sequential([keras.Input((20, 8)), keras.layers.LSTM(32), keras.layers.Dense(1, activation='sigmoid')])
model.compile('adam', 'binary_crossentropy')""",
        "cell": "model.fit(X, y, epochs=5, batch_size=32, verbose=0)",
        "note": "a Keras LSTM, 5 epochs of 188 batches",
    },
    {
        "id": "b5_kmeans_sweep",
        "setup": """from sklearn.cluster import KMeans
from sklearn.datasets import make_blobs
X, _ = make_blobs(n_samples=30000, n_features=8, centers=12, random_state=2)""",
        "cell": """inertias = []
for k in range(2, 30):
    inertias.append(KMeans(n_clusters=k, n_init=3, random_state=0).fit(X).inertia_)""",
        "note": "a loop of 28 KMeans fits whose cost grows with k",
    },
    {
        "id": "b5_apply_strings",
        "setup": """import pandas as pd
names = pd.Series([f'Item-{i:07d}-{"abcdef"[i % 6]}' for i in range(2_000_000)])""",
        "cell": "codes = names.apply(lambda v: int(v.split('-')[1]) % 97 + len(v))",
        "note": "Series.apply of a Python function over 2 million strings",
    },
    {
        "id": "b5_while_iterations",
        "setup": """import numpy as np
rng = np.random.default_rng(9)
M = rng.normal(size=(60, 60)) / 10
state = rng.normal(size=60)
it = 0
max_iter = 300_000""",
        "cell": """while it < max_iter:
    state = 0.5 * state + np.tanh(M @ state)
    it += 1""",
        "note": "a while loop of 300,000 small numpy steps, its counter against a name",
    },
    {
        "id": "b5_nested_comprehension",
        "setup": "m = 3000",
        "cell": "pairs = [(a, b) for a in range(m) for b in range(a)]",
        "note": "a nested comprehension whose inner length grows: 4.5 million tuples kept",
    },
    {
        "id": "b5_word_counts_split",
        "setup": """docs = [' '.join(f'w{(i * 7 + j) % 500}' for j in range(12)) for i in range(300000)]""",
        "cell": """counts = {}
for doc in docs:
    for w in doc.split():
        counts[w] = counts.get(w, 0) + 1""",
        "note": "300,000 documents of 12 words counted in a dict",
    },
    {
        "id": "b5_oom_byte_strings",
        "setup": "",
        "cell": """buffers = []
for i in range(500):
    buffers.append(b"\\x01" * (64 * 1024 * 1024))  # 64 MB each, every page written""",
        "note": "500 x 64 MB = 32 GB of byte strings on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# A sixth blind split, written on 2026-11-29 after runs were handed over only without loops inside and
# sampled calls inside cut loops kept their time whole: not run before its one measured run.
BLIND6 = [
    {
        "id": "b6_torch_embedding_bag",
        "setup": TORCH_MLP
        + """from torch.utils.data import DataLoader, TensorDataset
tokens = torch.randint(0, 5000, (40000, 24))
labels = (tokens[:, 0] % 2).long()
loader = DataLoader(TensorDataset(tokens, labels), batch_size=128, shuffle=True)
bag = nn.Sequential(nn.EmbeddingBag(5000, 32), nn.Linear(32, 2))
opt = torch.optim.Adam(bag.parameters(), 1e-2)""",
        "cell": """for epoch in range(10):
    for tb, lb in loader:
        opt.zero_grad()
        loss_fn(bag(tb), lb).backward()
        opt.step()""",
        "note": "an EmbeddingBag classifier over a DataLoader of token ids, 10 epochs of 313 batches",
    },
    {
        "id": "b6_torch_inference_kept",
        "setup": """import torch
from torch import nn
torch.manual_seed(6)
net = nn.Sequential(nn.Linear(256, 512), nn.ReLU(), nn.Linear(512, 256))
data = torch.randn(400000, 256)""",
        "cell": """outputs = []
with torch.no_grad():
    for i in range(0, len(data), 500):
        outputs.append(net(data[i:i + 500]))""",
        "note": "inference over slices of 500 rows, every output kept: 400 MB of results",
    },
    {
        "id": "b6_keras_regression",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(61)
X = rng.normal(size=(40000, 16)).astype('float32')
y = (X @ rng.normal(size=16)).astype('float32')
model = keras.Sequential([keras.Input((16,)), keras.layers.Dense(64, activation='relu'), keras.layers.Dense(1)])
model.compile('adam', 'mse')""",
        "cell": "model.fit(X, y, epochs=10, batch_size=64, validation_split=0.1, verbose=0)",
        "note": "Keras regression with a validation split, 10 epochs of 563 batches",
    },
    {
        "id": "b6_logistic_sweep",
        "setup": """from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import cross_val_score
X, y = make_classification(n_samples=40000, n_features=40, random_state=6)""",
        "cell": """scores = {}
for c in [0.001, 0.01, 0.1, 1.0, 10.0, 100.0]:
    scores[c] = cross_val_score(LogisticRegression(C=c, max_iter=500), X, y, cv=5).mean()""",
        "note": "a loop over C of cross-validated logistic regressions",
    },
    {
        "id": "b6_groupby_transform",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(62)
events = pd.DataFrame({'user': rng.integers(0, 40000, 500000), 'value': rng.normal(size=500000)})""",
        "cell": "events['z'] = events.groupby('user')['value'].transform(lambda s: (s - s.mean()) / (s.std() + 1))",
        "note": "groupby().transform of a Python function over 40,000 groups",
    },
    {
        "id": "b6_while_two_conditions",
        "setup": """import numpy as np
rng = np.random.default_rng(63)
w = rng.normal(size=100)
A = rng.normal(size=(200, 100))
b = A @ rng.normal(size=100)""",
        "cell": """step, err = 0, 1.0
while step < 60_000 and err > 1e-12:
    grad = A.T @ (A @ w - b) / 200
    w -= 0.001 * grad
    err = float(grad @ grad)
    step += 1""",
        "note": "gradient descent in a while loop with a step counter and a tolerance",
    },
    {
        "id": "b6_nested_strided",
        "setup": "n = 12000",
        "cell": """hits = 0
for i in range(n):
    for j in range(i, n, 3):
        hits += (i + j) & 1""",
        "note": "for i in range(n): for j in range(i, n, 3): the inner length shrinks by a third of one",
    },
    {
        "id": "b6_small_arrays_kept",
        "setup": "import numpy as np",
        "cell": """frames = []
for i in range(3000):
    frames.append(np.random.rand(120, 120))""",
        "note": "3,000 arrays of 115 kB kept: about 350 MB, fits",
    },
    {
        "id": "b6_oom_int64_tensors",
        "setup": "import torch",
        "cell": """kept = []
for i in range(100):
    kept.append(torch.ones(50_000_000, dtype=torch.int64))  # 400 MB each""",
        "note": "100 x 400 MB = 40 GB of tensors on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# Written before the bench ran on any of them (at 1845327); measured once.
BLIND7 = [
    {
        "id": "b7_torch_regression_loader",
        "setup": """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(7)
X = torch.randn(20000, 32)
y = X[:, :4].sum(dim=1, keepdim=True) + 0.1 * torch.randn(20000, 1)
loader = DataLoader(TensorDataset(X, y), batch_size=128, shuffle=True)
reg = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 1))
opt = torch.optim.Adam(reg.parameters(), lr=1e-3)""",
        "cell": """for epoch in range(15):
    for xb, yb in loader:
        opt.zero_grad()
        loss = nn.functional.mse_loss(reg(xb), yb)
        loss.backward()
        opt.step()""",
        "note": "an MLP regression over a shuffled DataLoader, 15 epochs of 157 batches",
    },
    {
        "id": "b7_torch_transformer_slices",
        "setup": """import torch
from torch import nn
torch.manual_seed(71)
tokens = torch.randn(8000, 32, 64)
labels = torch.randint(0, 2, (8000,))
encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(64, 4, 128, batch_first=True), 1)
head = nn.Linear(64, 2)
opt = torch.optim.AdamW(list(encoder.parameters()) + list(head.parameters()), lr=3e-4)""",
        "cell": """for epoch in range(4):
    for i in range(0, len(tokens), 64):
        out = head(encoder(tokens[i:i + 64]).mean(dim=1))
        loss = nn.functional.cross_entropy(out, labels[i:i + 64])
        opt.zero_grad()
        loss.backward()
        opt.step()""",
        "note": "a one-layer transformer encoder trained over slices of 64 sequences, 4 epochs of 125",
    },
    {
        "id": "b7_keras_classifier",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(72)
X = rng.normal(size=(30000, 20)).astype('float32')
y = (X[:, 0] + X[:, 1] > 0).astype('int32') + (X[:, 2] > 1).astype('int32')
clf = keras.Sequential([keras.Input((20,)), keras.layers.Dense(32, activation='relu'), keras.layers.Dense(3, activation='softmax')])
clf.compile('adam', 'sparse_categorical_crossentropy', metrics=['accuracy'])""",
        "cell": "history = clf.fit(X, y, epochs=8, batch_size=32, verbose=0)",
        "note": "a Keras three-class classifier, 8 epochs of 938 batches",
    },
    {
        "id": "b7_grid_search_forest",
        "setup": """from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier
from sklearn.model_selection import GridSearchCV
X, y = make_classification(n_samples=8000, n_features=20, n_informative=8, random_state=7)""",
        "cell": """search = GridSearchCV(RandomForestClassifier(n_estimators=50, random_state=0), {'max_depth': [4, 8, None]}, cv=3)
search.fit(X, y)""",
        "note": "a grid search of random forests: 3 depths x 3 folds, and the refit",
    },
    {
        "id": "b7_pandas_apply_rows",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(73)
orders = pd.DataFrame({'qty': rng.integers(1, 20, 200000), 'price': rng.uniform(1, 100, 200000), 'region': rng.choice(['north', 'south', 'east'], 200000)})""",
        "cell": """orders['total'] = orders.apply(lambda r: r['qty'] * r['price'] * (1.2 if r['region'] == 'north' else 1.0), axis=1)""",
        "note": "DataFrame.apply over 200,000 rows with a Python function",
    },
    {
        "id": "b7_hist_gradient_boosting",
        "setup": """import numpy as np
from sklearn.ensemble import HistGradientBoostingRegressor
rng = np.random.default_rng(74)
X = rng.normal(size=(100000, 30))
y = X[:, 0] * X[:, 1] + np.sin(X[:, 2]) + rng.normal(scale=0.1, size=100000)""",
        "cell": """hgb = HistGradientBoostingRegressor(max_iter=200, early_stopping=False, random_state=0)
hgb.fit(X, y)""",
        "note": "a histogram gradient boosting fit: 200 iterations on 100,000 rows",
    },
    {
        "id": "b7_collatz_while",
        "setup": "",
        "cell": """longest = 0
n = 1
while n < 100000:
    m, steps = n, 0
    while m != 1:
        m = m // 2 if m % 2 == 0 else 3 * m + 1
        steps += 1
    longest = max(longest, steps)
    n += 1""",
        "note": "Collatz sequence lengths: a while loop whose inner while's length varies from run to run",
    },
    {
        "id": "b7_nested_pairs",
        "setup": """import random
random.seed(75)
pts = [(random.random(), random.random()) for _ in range(4000)]""",
        "cell": """close = 0
for i in range(len(pts)):
    xi, yi = pts[i]
    for j in range(i):
        dx, dy = xi - pts[j][0], yi - pts[j][1]
        if dx * dx + dy * dy < 0.001:
            close += 1""",
        "note": "pairs of 4,000 points: an inner loop as long as the outer index (8 million pairs)",
    },
    {
        "id": "b7_dict_of_arrays",
        "setup": "import numpy as np",
        "cell": """cache = {}
for k in range(2000):
    cache[k] = np.zeros((250, 250)) + k""",
        "note": "2,000 arrays of 500 kB kept in a dict: about 1 GB, fits",
    },
    {
        "id": "b7_list_of_strings",
        "setup": "",
        "cell": """lines = []
for i in range(3_000_000):
    lines.append(f"{i},{i * i},{i % 7}")""",
        "note": "3 million formatted strings kept in a list",
    },
    {
        "id": "b7_groupby_apply_frame",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(76)
sales = pd.DataFrame({'store': rng.integers(0, 8000, 240000), 'day': rng.integers(0, 365, 240000), 'amount': rng.gamma(2.0, 30.0, 240000)})""",
        "cell": "recent = sales.groupby('store').apply(lambda g: g.sort_values('day').tail(3))",
        "note": "groupby().apply of a Python function returning frames, over 8,000 stores",
    },
    {
        "id": "b7_oom_float64_blocks",
        "setup": "import numpy as np",
        "cell": """blocks = []
for i in range(20):
    blocks.append(np.ones((20000, 20000)))  # 3.2 GB each""",
        "note": "20 x 3.2 GB = 64 GB of arrays on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# Written before the bench ran on any of them (at eabb8e9); measured once.
BLIND8 = [
    {
        "id": "b8_torch_cnn_loader",
        "setup": """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(8)
images = torch.randn(4000, 3, 32, 32)
classes = torch.randint(0, 10, (4000,))
loader = DataLoader(TensorDataset(images, classes), batch_size=64, shuffle=True)
cnn = nn.Sequential(nn.Conv2d(3, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(), nn.Linear(32 * 8 * 8, 10))
opt = torch.optim.SGD(cnn.parameters(), lr=0.01, momentum=0.9)""",
        "cell": """for epoch in range(3):
    for xb, yb in loader:
        opt.zero_grad()
        nn.functional.cross_entropy(cnn(xb), yb).backward()
        opt.step()""",
        "note": "a small CNN over a DataLoader of 32x32 colour images, 3 epochs of 63 batches",
    },
    {
        "id": "b8_torch_lstm_slices",
        "setup": """import torch
from torch import nn
torch.manual_seed(81)
seqs = torch.randn(3000, 40, 8)
targets = seqs[:, -1, :1] * 2
lstm = nn.LSTM(8, 64, batch_first=True)
out_layer = nn.Linear(64, 1)
opt = torch.optim.Adam(list(lstm.parameters()) + list(out_layer.parameters()), lr=1e-3)""",
        "cell": """for epoch in range(5):
    for i in range(0, len(seqs), 64):
        hidden, _ = lstm(seqs[i:i + 64])
        loss = nn.functional.mse_loss(out_layer(hidden[:, -1]), targets[i:i + 64])
        opt.zero_grad()
        loss.backward()
        opt.step()""",
        "note": "an LSTM regression over slices of 64 sequences, 5 epochs of 47",
    },
    {
        "id": "b8_keras_functional",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(82)
X = rng.normal(size=(20000, 12)).astype('float32')
y = (np.tanh(X[:, 0]) + X[:, 1] * X[:, 2]).astype('float32')
X_val, y_val = X[:2000], y[:2000]
inputs = keras.Input((12,))
wide = keras.layers.Dense(1)(inputs)
deep = keras.layers.Dense(1)(keras.layers.Dropout(0.1)(keras.layers.Dense(48, activation='relu')(inputs)))
net = keras.Model(inputs, keras.layers.Add()([wide, deep]))
net.compile('adam', 'mse')""",
        "cell": "net.fit(X, y, epochs=6, batch_size=64, validation_data=(X_val, y_val), verbose=0)",
        "note": "a wide-and-deep Keras model with validation data, 6 epochs of 313 batches",
    },
    {
        "id": "b8_random_forest_fit",
        "setup": """import numpy as np
from sklearn.ensemble import RandomForestRegressor
rng = np.random.default_rng(83)
X = rng.normal(size=(20000, 15))
y = X[:, 0] ** 2 + X[:, 1] - X[:, 2] * X[:, 3] + rng.normal(scale=0.2, size=20000)""",
        "cell": """forest = RandomForestRegressor(n_estimators=60, random_state=0)
forest.fit(X, y)""",
        "note": "a random forest regression: 60 trees on 20,000 rows",
    },
    {
        "id": "b8_cross_val_boosting",
        "setup": """from sklearn.datasets import make_classification
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import cross_val_score
X, y = make_classification(n_samples=6000, n_features=20, random_state=8)""",
        "cell": "scores = cross_val_score(GradientBoostingClassifier(n_estimators=100, random_state=0), X, y, cv=4)",
        "note": "4-fold cross-validation of a 100-tree gradient boosting classifier",
    },
    {
        "id": "b8_series_apply_text",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(84)
words = np.array(['data', 'model', 'loss', 'batch', 'epoch', 'tensor', 'frame', 'column'])
reviews = pd.Series([' '.join(rng.choice(words, 12)) for _ in range(600000)])""",
        "cell": "distinct = reviews.apply(lambda text: len(set(text.split())))",
        "note": "Series.apply of a Python function over 600,000 short texts",
    },
    {
        "id": "b8_while_descent_numpy",
        "setup": """import numpy as np
rng = np.random.default_rng(85)
A = rng.normal(size=(400, 400)) / 20
b = rng.normal(size=400)
w = np.zeros(400)""",
        "cell": """step = 0
while step < 20000:
    w -= 0.01 * (A.T @ (A @ w - b))
    step += 1""",
        "note": "gradient descent in a while loop counting to 20,000 steps of 400x400 products",
    },
    {
        "id": "b8_nested_growing_comprehension",
        "setup": "",
        "cell": """sums = []
for i in range(6000):
    sums.append(sum([j * i % 7 for j in range(i)]))""",
        "note": "an inner comprehension as long as the outer index: 18 million iterations",
    },
    {
        "id": "b8_tensors_kept",
        "setup": "import torch",
        "cell": """features = []
for i in range(400):
    features.append(torch.randn(512, 512))""",
        "note": "400 tensors of 1 MB kept: about 400 MB, fits",
    },
    {
        "id": "b8_frames_then_concat",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(86)""",
        "cell": """parts = []
for k in range(200):
    parts.append(pd.DataFrame(rng.normal(size=(20000, 10))))
combined = pd.concat(parts, ignore_index=True)""",
        "note": "200 frames of 1.6 MB kept, then concatenated: about 640 MB at the peak",
    },
    {
        "id": "b8_oom_torch_zeros",
        "setup": "import torch",
        "cell": """activations = []
for i in range(100):
    activations.append(torch.zeros(100_000_000))  # 400 MB each""",
        "note": "100 x 400 MB = 40 GB of tensors on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


# Written before the bench ran on any of them (at dd4f6c2); measured once.
BLIND9 = [
    {
        "id": "b9_torch_mlp_loader_workers0",
        "setup": """import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset
torch.manual_seed(9)
features = torch.randn(30000, 50)
labels = (features[:, :5].sum(dim=1) > 0).long()
train_loader = DataLoader(TensorDataset(features, labels), batch_size=256, shuffle=True)
mlp = nn.Sequential(nn.Linear(50, 256), nn.ReLU(), nn.Linear(256, 256), nn.ReLU(), nn.Linear(256, 2))
optimizer = torch.optim.Adam(mlp.parameters(), lr=1e-3)""",
        "cell": """history = []
for epoch in range(10):
    total = 0.0
    for xb, yb in train_loader:
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(mlp(xb), yb)
        loss.backward()
        optimizer.step()
        total += loss.item()
    history.append(total / len(train_loader))""",
        "note": "a two-hidden-layer MLP over a DataLoader of 256-row batches, 10 epochs of 118, losses kept",
    },
    {
        "id": "b9_torch_autoencoder_slices",
        "setup": """import torch
from torch import nn
torch.manual_seed(91)
pixels = torch.rand(12000, 784)
encoder = nn.Sequential(nn.Linear(784, 128), nn.ReLU(), nn.Linear(128, 32))
decoder = nn.Sequential(nn.Linear(32, 128), nn.ReLU(), nn.Linear(128, 784), nn.Sigmoid())
params = list(encoder.parameters()) + list(decoder.parameters())
opt = torch.optim.Adam(params, lr=1e-3)""",
        "cell": """for epoch in range(6):
    for i in range(0, len(pixels), 128):
        batch = pixels[i:i + 128]
        loss = nn.functional.binary_cross_entropy(decoder(encoder(batch)), batch)
        opt.zero_grad()
        loss.backward()
        opt.step()""",
        "note": "an autoencoder over slices of 128 images of 784 pixels, 6 epochs of 94",
    },
    {
        "id": "b9_keras_conv1d",
        "setup": """import numpy as np
import keras
rng = np.random.default_rng(92)
signals = rng.normal(size=(6000, 64, 1)).astype('float32')
kinds = (signals[:, :32, 0].mean(axis=1) > 0).astype('int32')
conv = keras.Sequential([keras.Input((64, 1)), keras.layers.Conv1D(16, 5, activation='relu'), keras.layers.GlobalAveragePooling1D(), keras.layers.Dense(2, activation='softmax')])
conv.compile('adam', 'sparse_categorical_crossentropy')""",
        "cell": "conv.fit(signals, kinds, epochs=10, batch_size=32, verbose=0)",
        "note": "a Keras 1-D convolution over 6,000 signals, 10 epochs of 188 batches",
    },
    {
        "id": "b9_randomized_search_svr",
        "setup": """import numpy as np
from sklearn.svm import SVR
from sklearn.model_selection import RandomizedSearchCV
rng = np.random.default_rng(93)
X = rng.normal(size=(4000, 10))
y = np.sin(X[:, 0]) + X[:, 1] ** 2 + rng.normal(scale=0.1, size=4000)""",
        "cell": """search = RandomizedSearchCV(SVR(), {'C': [0.1, 1, 10, 100], 'epsilon': [0.01, 0.1, 0.5], 'gamma': ['scale', 0.05, 0.2]}, n_iter=8, cv=3, random_state=0)
search.fit(X, y)""",
        "note": "a randomized search of support vector regressions: 8 candidates x 3 folds, and the refit",
    },
    {
        "id": "b9_extra_trees_fit",
        "setup": """from sklearn.datasets import make_regression
from sklearn.ensemble import ExtraTreesRegressor
X, y = make_regression(n_samples=40000, n_features=25, noise=5.0, random_state=9)""",
        "cell": """trees = ExtraTreesRegressor(n_estimators=80, min_samples_leaf=3, random_state=0)
trees.fit(X, y)""",
        "note": "an extra trees regression: 80 trees on 40,000 rows",
    },
    {
        "id": "b9_frame_apply_axis1_dates",
        "setup": """import numpy as np
import pandas as pd
rng = np.random.default_rng(94)
visits = pd.DataFrame({'start': pd.Timestamp('2024-01-01') + pd.to_timedelta(rng.integers(0, 10**6, 150000), unit='m'), 'minutes': rng.integers(1, 240, 150000)})""",
        "cell": "visits['weekend_evening'] = visits.apply(lambda r: r['start'].dayofweek >= 5 and r['start'].hour + r['minutes'] / 60 > 18, axis=1)",
        "note": "DataFrame.apply(axis=1) over 150,000 rows reading timestamps",
    },
    {
        "id": "b9_while_simulation",
        "setup": """import random
random.seed(95)""",
        "cell": """balance, t, ruined = 100, 0, 0
while t < 3_000_000:
    balance += 1 if random.random() < 0.5 else -1
    if balance == 0:
        ruined += 1
        balance = 100
    t += 1""",
        "note": "a random walk simulated in a while loop counting to 3 million steps",
    },
    {
        "id": "b9_nested_matrix_python",
        "setup": """import random
random.seed(96)
n = 160
A = [[random.random() for _ in range(n)] for _ in range(n)]
B = [[random.random() for _ in range(n)] for _ in range(n)]""",
        "cell": """C = [[0.0] * n for _ in range(n)]
for i in range(n):
    for j in range(n):
        s = 0.0
        for k in range(n):
            s += A[i][k] * B[k][j]
        C[i][j] = s""",
        "note": "a matrix product in pure Python: three nested loops of 160, 4 million innermost iterations",
    },
    {
        "id": "b9_embeddings_dict",
        "setup": "import numpy as np",
        "cell": """vectors = {}
for word_id in range(300000):
    vectors[f'w{word_id}'] = np.full(300, word_id, dtype=np.float32)""",
        "note": "300,000 vectors of 1.2 kB kept in a dict: about 400 MB with their headers",
    },
    {
        "id": "b9_lists_of_tuples",
        "setup": "",
        "cell": """pairs = []
for a in range(2000):
    for b in range(1000):
        pairs.append((a, b, a * b))""",
        "note": "2 million tuples kept in a list from a nested loop",
    },
    {
        "id": "b9_oom_numpy_stack",
        "setup": "import numpy as np",
        "cell": """frames = []
for i in range(120):
    frames.append(np.random.rand(4000, 10000))  # 320 MB each""",
        "note": "120 x 320 MB = 38 GB of arrays on a 24 GB machine: out of memory by arithmetic; never run",
        "expect_oom": True,
        "real": False,
    },
]


def main() -> None:
    out = Path(__file__).with_name("cases.jsonl")
    with out.open("w", encoding="utf-8") as fh:
        for split, cases in (
            ("dev", DEV),
            ("blind", BLIND),
            ("blind2", BLIND2),
            ("blind3", BLIND3),
            ("blind4", BLIND4),
            ("blind5", BLIND5),
            ("blind6", BLIND6),
            ("blind7", BLIND7),
            ("blind8", BLIND8),
            ("blind9", BLIND9),
        ):
            for case in cases:
                fh.write(
                    json.dumps(
                        {"id": case["id"], "split": split, **{k: v for k, v in case.items() if k != "id"}}
                    )
                    + "\n"
                )
    print(
        f"wrote {out}: {len(DEV)} dev, {len(BLIND)} blind, {len(BLIND2)} blind2, {len(BLIND3)} blind3, {len(BLIND4)} blind4, {len(BLIND5)} blind5, {len(BLIND6)} blind6, {len(BLIND7)} blind7, {len(BLIND8)} blind8, {len(BLIND9)} blind9"
    )


if __name__ == "__main__":
    main()
