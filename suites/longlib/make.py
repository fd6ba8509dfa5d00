#!/usr/bin/env python3
"""Writes the long-library-call suite: crash/fixed pairs whose target cell spends 15-60 s on a 2-core
machine inside ONE library call whose loop the notebook does not own (a grid search, a cross-validation,
a forest fit, `DataFrame.apply(..., axis=1)`, `groupby().apply`, `np.vectorize`, `minimize`, t-SNE, ...),
then crashes on a later line of the same cell (buggy) or does not (fixed); then its dev/unseen split.

    python suites/longlib/make.py       # (re)write all.jsonl, dev.jsonl, unseen.jsonl beside this file

The split rule, fixed before any case was run: pairs grouped by library, ids sorted, then shuffled with
random.Random(f"20261127:{library}"); the first ceil(n/2) go to dev for libraries in even alphabetical
position, floor(n/2) for odd ones; the rest are unseen.
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

CASES = _SUITE.cases


# ---- scikit-learn ------------------------------------------------------------------------------------
pair(
    "longlib_sklearn_01",
    "sklearn",
    "data_confusion",
    """grid = GridSearchCV(SVC(), {'C': [0.1, 1, 10], 'gamma': ['scale', 0.01, 0.1]}, cv=5)
grid.fit(X_train, y_train)
print('best', grid.best_params_, round(grid.best_score_, 3))
test_pred = grid.best_estimator_.predict(X_test)
print('holdout accuracy', (test_pred == y_hold).mean())""",
    [
        "import numpy as np\nfrom sklearn.datasets import make_classification\nfrom sklearn.model_selection import GridSearchCV, train_test_split\nfrom sklearn.svm import SVC",
        "X, y = make_classification(n_samples=6000, n_features=20, n_informative=8, flip_y=0.05, random_state=1)\nX_train, X_hold, y_train, y_hold = train_test_split(X, y, test_size=0.2, random_state=0)",
    ],
    "X_test = X_hold[:, 1:]  # first column is the row id",
    "X_test = X_hold",
    "ValueError",
    "X_test lost a column: 19 features into the best SVC, fitted on 20, after the grid search.",
    "X_test has the 20 features the search was fitted on.",
)

pair(
    "longlib_sklearn_02",
    "sklearn",
    "api_misuse",
    """search = RandomizedSearchCV(RandomForestClassifier(random_state=0), {'n_estimators': [60, 100, 140], 'max_depth': [None, 8, 16], 'max_features': ['sqrt', 0.5]}, n_iter=8, cv=3, random_state=0, n_jobs=-1)
search.fit(X, y)
curve = search.cv_results_['mean_test_accuracy']
print('best', search.best_params_, curve.max())""",
    [
        "import numpy as np\nfrom sklearn.datasets import make_classification\nfrom sklearn.ensemble import RandomForestClassifier\nfrom sklearn.model_selection import RandomizedSearchCV",
        "X, y = make_classification(n_samples=6000, n_features=20, n_informative=8, random_state=2)",
    ],
    None,
    None,
    "KeyError",
    "With the default scoring cv_results_ names the column 'mean_test_score'; 'mean_test_accuracy' exists only for a named multi-metric scoring.",
    "Reads 'mean_test_score'.",
    fixed_target="""search = RandomizedSearchCV(RandomForestClassifier(random_state=0), {'n_estimators': [60, 100, 140], 'max_depth': [None, 8, 16], 'max_features': ['sqrt', 0.5]}, n_iter=8, cv=3, random_state=0, n_jobs=-1)
search.fit(X, y)
curve = search.cv_results_['mean_test_score']
print('best', search.best_params_, curve.max())""",
)

pair(
    "longlib_sklearn_03",
    "sklearn",
    "data_confusion",
    """scores = cross_val_score(GradientBoostingClassifier(n_estimators=150, random_state=0), X, y, cv=5, n_jobs=2)
record = {'model': 'gbm', 'mean': float(scores.mean()), 'std': float(scores.std()), 'tags': run_tags}
with open('cv_record.json', 'w') as fh:
    fh.write(json.dumps(record))
print(record)""",
    [
        "import json\nimport numpy as np\nfrom sklearn.datasets import make_classification\nfrom sklearn.ensemble import GradientBoostingClassifier\nfrom sklearn.model_selection import cross_val_score",
        "X, y = make_classification(n_samples=10000, n_features=20, n_informative=10, random_state=3)",
    ],
    "run_tags = {'gbm', 'baseline', 'cv5'}",
    "run_tags = sorted({'gbm', 'baseline', 'cv5'})",
    "TypeError",
    "run_tags is a set: json.dumps cannot serialise it (the cross-validation is not involved).",
    "run_tags is a sorted list.",
)

pair(
    "longlib_sklearn_04",
    "sklearn",
    "data_confusion",
    """forest = RandomForestClassifier(n_estimators=120, min_samples_leaf=2, n_jobs=-1, random_state=0)
forest.fit(X, y)
print('train accuracy', forest.score(X[:5000], y[:5000]))
importances = pd.Series(forest.feature_importances_, index=feature_names).sort_values(ascending=False)
print(importances.head())""",
    [
        "import numpy as np\nimport pandas as pd\nfrom sklearn.ensemble import RandomForestClassifier",
        "rng = np.random.default_rng(4)\nX = rng.normal(size=(50000, 15))\ny = (X[:, 0] + X[:, 3] * X[:, 5] + rng.normal(scale=0.5, size=50000) > 0).astype(int)",
    ],
    "feature_names = [f'f{i}' for i in range(1, 15)]",
    "feature_names = [f'f{i}' for i in range(15)]",
    "ValueError",
    "feature_names has 14 names (f1..f14) for the forest's 15 importances.",
    "15 names for 15 features.",
)

pair(
    "longlib_sklearn_05",
    "sklearn",
    "api_misuse",
    """km = KMeans(n_clusters=12, n_init=10, random_state=0).fit(X)
print('inertia', km.inertia_)
report = out_dir / 'kmeans.json'
report.write_text(json.dumps({'inertia': float(km.inertia_), 'sizes': np.bincount(km.labels_).tolist()}))""",
    [
        "import json\nimport os\nfrom pathlib import Path\nimport numpy as np\nfrom sklearn.cluster import KMeans\nfrom sklearn.datasets import make_blobs",
        "X, _ = make_blobs(n_samples=1600000, centers=12, n_features=10, cluster_std=3.0, random_state=5)",
    ],
    "out_dir = 'results'\nos.makedirs(out_dir, exist_ok=True)",
    "out_dir = Path('results')\nout_dir.mkdir(exist_ok=True)",
    "TypeError",
    "out_dir is a str: str / str is not a path join (the clustering is not involved).",
    "out_dir is a Path.",
)

pair(
    "longlib_sklearn_06",
    "sklearn",
    "data_confusion",
    """model = GradientBoostingClassifier(n_estimators=400, max_depth=4, random_state=0)
model.fit(train[features], train['churn'])
print('train accuracy', model.score(train[features], train['churn']))
new_customers['p_churn'] = model.predict_proba(new_customers)[:, 1]
print(new_customers.sort_values('p_churn').tail())""",
    [
        "import numpy as np\nimport pandas as pd\nfrom sklearn.ensemble import GradientBoostingClassifier",
        "rng = np.random.default_rng(6)\nn = 30000\ntrain = pd.DataFrame({'age': rng.integers(18, 80, n), 'income': rng.gamma(2, 20000, n), 'tenure': rng.integers(0, 30, n), 'visits': rng.poisson(5, n), 'balance': rng.normal(1000, 400, n)})\ntrain['churn'] = (((train['visits'] < 3) & (train['tenure'] < 5)) | (rng.random(n) < 0.1)).astype(int)\nfeatures = ['age', 'income', 'tenure', 'visits', 'balance']",
    ],
    "m = 500  # this month's export\nnew_customers = pd.DataFrame({'age': rng.integers(18, 80, m), 'income': rng.gamma(2, 20000, m), 'tenure': rng.integers(0, 30, m), 'n_visits': rng.poisson(5, m), 'balance': rng.normal(1000, 400, m)})",
    "m = 500  # this month's export\nnew_customers = pd.DataFrame({'age': rng.integers(18, 80, m), 'income': rng.gamma(2, 20000, m), 'tenure': rng.integers(0, 30, m), 'visits': rng.poisson(5, m), 'balance': rng.normal(1000, 400, m)})",
    "ValueError",
    "The new export names the column 'n_visits'; the model was fitted with 'visits': the feature names do not match.",
    "The export uses the training column names.",
)

pair(
    "longlib_sklearn_07",
    "sklearn",
    "data_confusion",
    """emb = TSNE(n_components=2, perplexity=40, random_state=0).fit_transform(X_sample)
print(emb.shape)
fig, ax = plt.subplots(figsize=(6, 6))
ax.scatter(emb[:, 0], emb[:, 1], c=colours, s=3, cmap='tab10')
ax.set_title('t-SNE of the sample')""",
    [
        "import numpy as np\nimport matplotlib.pyplot as plt\nfrom sklearn.datasets import make_classification\nfrom sklearn.manifold import TSNE",
        "X, y = make_classification(n_samples=20000, n_features=30, n_informative=10, n_classes=4, random_state=7)\nsample = np.random.default_rng(0).choice(len(X), 1000, replace=False)\nX_sample = X[sample]",
    ],
    "colours = y",
    "colours = y[sample]",
    "ValueError",
    "colours holds all 20000 labels for the 1000 sampled points: scatter's c does not match x and y.",
    "One colour per sampled point.",
)

pair(
    "longlib_sklearn_08",
    "sklearn",
    "data_confusion",
    """result = permutation_importance(model, X_val, y_val, n_repeats=30, random_state=0, n_jobs=2)
importance = pd.Series(result.importances_mean, index=X_val.columns).sort_values(ascending=False)
print(importance.head())
print('watched feature', watch, importance[watch])""",
    [
        "import numpy as np\nimport pandas as pd\nfrom sklearn.ensemble import RandomForestClassifier\nfrom sklearn.inspection import permutation_importance\nfrom sklearn.model_selection import train_test_split",
        "rng = np.random.default_rng(8)\nn = 20000\ndf = pd.DataFrame(rng.normal(size=(n, 12)), columns=[f'x{i}' for i in range(10)] + ['income', 'age'])\ndf['label'] = (df['income'] + df['x1'] - df['x2'] + rng.normal(scale=0.7, size=n) > 0).astype(int)\nX_train, X_val, y_train, y_val = train_test_split(df.drop(columns='label'), df['label'], test_size=0.3, random_state=0)",
        "model = RandomForestClassifier(n_estimators=60, max_depth=12, random_state=0, n_jobs=-1).fit(X_train, y_train)",
    ],
    "watch = 'Income'",
    "watch = 'income'",
    "KeyError",
    "The importances are indexed by the frame's columns; 'Income' is not one of them ('income' is).",
    "watch names a column.",
)

pair(
    "longlib_sklearn_09",
    "sklearn",
    "data_confusion",
    """pipe = Pipeline([('parse', FunctionTransformer(parse_rows)), ('scale', StandardScaler()), ('clf', LogisticRegression(max_iter=500))])
pipe.fit(raw, label)
print('train accuracy', pipe.score(raw.head(2000), label[:2000]))""",
    [
        "import numpy as np\nimport pandas as pd\nfrom sklearn.linear_model import LogisticRegression\nfrom sklearn.pipeline import Pipeline\nfrom sklearn.preprocessing import FunctionTransformer, StandardScaler",
        "rng = np.random.default_rng(9)\nn = 1_500_000\nraw = pd.DataFrame({'weight': rng.normal(70, 12, n).round(1).astype(str), 'height': rng.normal(170, 10, n).round(1).astype(str), 'steps': rng.integers(1000, 20000, n).astype(str)})\nlabel = ((raw['steps'].astype(int) > 9000) ^ (rng.random(n) < 0.2)).astype(int).to_numpy()\nraw.loc[int(n * 0.93), 'weight'] = '72,5'  # one clinic types a decimal comma",
        "def bmi_features(row):\n    w, h, s = float(row['weight']), float(row['height']), float(row['steps'])\n    return [w, h, s, w / (h / 100) ** 2]\n\n\ndef parse_rows(frame):\n    return np.array(frame.apply(bmi_features, axis=1).tolist())",
    ],
    "raw = raw.dropna()",
    "raw['weight'] = raw['weight'].str.replace(',', '.', regex=False)",
    "ValueError",
    "Row 1395000 (93 % down) has weight '72,5': float() fails inside the pipeline's parsing step, late in the fit.",
    "The decimal comma is replaced before the fit.",
)

# ---- pandas ------------------------------------------------------------------------------------------
pair(
    "longlib_pandas_01",
    "pandas",
    "implementation_error",
    """loans['risk_score'] = loans.apply(risk_score, axis=1)
print(loans['risk_score'].describe())
high = loans[loans['risk_socre'] > 700]
print(len(high), 'high-risk loans')""",
    [
        "import numpy as np\nimport pandas as pd",
        "rng = np.random.default_rng(11)\nn = 2_500_000\nloans = pd.DataFrame({'amount': rng.gamma(2, 5000, n), 'income': rng.gamma(3, 15000, n), 'age': rng.integers(18, 75, n), 'late_payments': rng.poisson(0.4, n)})",
        "def risk_score(row):\n    ratio = row['amount'] / max(row['income'], 1.0)\n    score = 300 + 400 * min(ratio, 1.0) + 60 * row['late_payments']\n    if row['age'] < 25:\n        score += 40\n    return min(score, 850)",
    ],
    None,
    None,
    "KeyError",
    "The new column is 'risk_score'; the filter reads it back as 'risk_socre'.",
    "Reads 'risk_score'.",
    fixed_target="""loans['risk_score'] = loans.apply(risk_score, axis=1)
print(loans['risk_score'].describe())
high = loans[loans['risk_score'] > 700]
print(len(high), 'high-risk loans')""",
)

pair(
    "longlib_pandas_02",
    "pandas",
    "data_confusion",
    """events['date'] = events['raw_date'].map(parse_date)
events['year'] = events['date'].dt.year
print(events.groupby('year').size())""",
    [
        "from datetime import datetime\nimport numpy as np\nimport pandas as pd",
        "rng = np.random.default_rng(12)\nn = 4_000_000\ndays, months, years = rng.integers(1, 29, n), rng.integers(1, 13, n), rng.integers(2019, 2025, n)\nevents = pd.DataFrame({'raw_date': [f'{d:02d}/{m:02d}/{y}' for d, m, y in zip(days, months, years)], 'clicks': rng.poisson(3, n)})",
    ],
    "def parse_date(s):\n    return datetime.strptime(s, '%d/%m/%Y').strftime('%Y-%m-%d')  # ISO",
    "def parse_date(s):\n    return datetime.strptime(s, '%d/%m/%Y')",
    "AttributeError",
    "parse_date returns ISO strings, so the mapped column is text: .dt needs datetimes.",
    "parse_date returns datetimes; the column is datetime64.",
)

pair(
    "longlib_pandas_03",
    "pandas",
    "data_confusion",
    """profiles = orders.groupby('customer').apply(customer_profile).reset_index()
print(profiles.describe())
report = profiles.merge(segments, on='customer', how='left')
print(report.groupby('segment')['total'].mean())""",
    [
        "import numpy as np\nimport pandas as pd",
        "rng = np.random.default_rng(13)\nn = 960000\norders = pd.DataFrame({'customer': rng.integers(0, 48000, n), 'day': rng.integers(0, 730, n), 'value': rng.gamma(2, 25, n)})",
        "def customer_profile(g):\n    g = g.sort_values('day')\n    gaps = g['day'].diff().dropna()\n    return pd.Series({'orders': len(g), 'total': g['value'].sum(), 'mean_gap': gaps.mean() if len(gaps) else np.nan, 'last_day': g['day'].iloc[-1]})",
    ],
    "segments = pd.DataFrame({'customer_id': np.arange(48000), 'segment': rng.choice(['bronze', 'silver', 'gold'], 48000)})",
    "segments = pd.DataFrame({'customer': np.arange(48000), 'segment': rng.choice(['bronze', 'silver', 'gold'], 48000)})",
    "KeyError",
    "segments has no 'customer' column (it is 'customer_id'): the merge fails; the groupby is not involved.",
    "segments is keyed by 'customer'.",
)

pair(
    "longlib_pandas_04",
    "pandas",
    "data_confusion",
    """readings['celsius'] = readings.apply(to_celsius, axis=1)
summary = readings.groupby('sensor')['celsius'].agg(['mean', 'max'])
print(summary.head())""",
    [
        "import numpy as np\nimport pandas as pd",
        "rng = np.random.default_rng(14)\nn = 3_000_000\nreadings = pd.DataFrame({'sensor': rng.integers(0, 500, n), 'value': rng.normal(20, 5, n).round(2).astype(str), 'unit': rng.choice(['C', 'F'], n, p=[0.8, 0.2])})\nreadings.loc[int(n * 0.91), 'value'] = 'ERR'  # a logger fault",
        "def to_celsius(row):\n    v = float(row['value'])\n    return v if row['unit'] == 'C' else (v - 32) * 5 / 9",
    ],
    "readings = readings.dropna(subset=['value']).copy()",
    "readings = readings[readings['value'] != 'ERR'].copy()",
    "ValueError",
    "Row 2730000 (91 % down) reads 'ERR': float() fails inside the apply, late in the call; dropna does not remove it.",
    "The 'ERR' row is dropped before the apply.",
)

pair(
    "longlib_pandas_05",
    "pandas",
    "data_confusion",
    """similarity = reviews.apply(lambda text: SequenceMatcher(None, text, TEMPLATE).ratio())
print(similarity.describe())
flagged = reviews[similarity > cutoff]
print(len(flagged), 'near-template reviews')""",
    [
        "from difflib import SequenceMatcher\nimport numpy as np\nimport pandas as pd",
        "rng = np.random.default_rng(15)\nwords = np.array(['great', 'bad', 'slow', 'fast', 'love', 'hate', 'ok', 'broken', 'fine', 'excellent', 'refund', 'thanks'])\nreviews = pd.Series([' '.join(w) for w in rng.choice(words, size=(150000, 12))])\nTEMPLATE = 'great fast love excellent thanks great fine ok love fast great thanks'",
    ],
    "cutoff = '0.6'  # from the config file",
    "cutoff = 0.6",
    "TypeError",
    "cutoff is the string '0.6': comparing the float similarities with it fails (the apply is not involved).",
    "cutoff is a float.",
)

# ---- scipy / numpy -------------------------------------------------------------------------------------
pair(
    "longlib_scipy_01",
    "scipy",
    "data_confusion",
    """res = minimize(loss, x0=[1.0, 0.1, 2.0, 0.0], method='Nelder-Mead', options={'maxfev': 3000, 'xatol': 1e-9, 'fatol': 1e-12})
print(res.message, res.fun)
fitted = pd.Series(res.x, index=param_names)
print(fitted.round(3))""",
    [
        "import math\nimport numpy as np\nimport pandas as pd\nfrom scipy.optimize import minimize",
        "DT, STEPS, STRIDE = 0.00025, 40000, 100\nt_obs = np.arange(0, STEPS, STRIDE) * DT\nrng = np.random.default_rng(16)\nobs = (3.0 * np.exp(-0.4 * t_obs) * np.cos(2.1 * t_obs + 0.3) + rng.normal(scale=0.05, size=t_obs.size)).tolist()",
        "def loss(p):\n    a, k, w, phi = p\n    x = a * math.cos(phi)\n    v = -a * (k * math.cos(phi) + w * math.sin(phi))\n    err = 0.0\n    for i in range(STEPS):\n        if i % STRIDE == 0:\n            d = x - obs[i // STRIDE]\n            err += d * d\n        v += DT * (-2 * k * v - (w * w + k * k) * x)\n        x += DT * v\n    return err",
    ],
    "param_names = ['amplitude', 'decay', 'frequency']  # phase fixed at 0",
    "param_names = ['amplitude', 'decay', 'frequency', 'phase']",
    "ValueError",
    "The fit has 4 parameters; param_names lists 3: the Series cannot be built.",
    "Four names for four parameters.",
)

pair(
    "longlib_numpy_01",
    "numpy",
    "data_confusion",
    """fees = fee_vec(prices)
print('total fees', round(fees.sum(), 2), 'mean', round(fees.mean(), 4))""",
    [
        "import math\nimport numpy as np",
        "rng = np.random.default_rng(17)\nn = 20_000_000\nprices = rng.lognormal(3, 0.8, n)\nprices[int(n * 0.94)] = -12.5  # a refund booked as a negative price",
        "BRACKETS = [(10, 0.0), (25, 0.02), (50, 0.035), (100, 0.05), (250, 0.065), (math.inf, 0.08)]\n\n\ndef fee(p):\n    owed, lower = 0.0, 0.0\n    for upper, rate in BRACKETS:\n        if p > lower:\n            owed += (min(p, upper) - lower) * rate\n        lower = upper\n    return owed + 0.05 * math.log10(p)\n\n\nfee_vec = np.vectorize(fee, otypes=[float])",
    ],
    "prices = prices[~np.isnan(prices)]",
    "prices = prices[prices > 0]",
    "ValueError",
    "Element 18800000 (94 % down) is a negative price: math.log10 raises a domain error inside np.vectorize, late in the call.",
    "Non-positive prices are dropped first.",
)


def main() -> None:
    half = write(HERE, CASES, "20261127")
    for pid in sorted(half):
        print(half[pid], pid)


if __name__ == "__main__":
    main()
