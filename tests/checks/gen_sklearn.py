"""Variants of scikit-learn crash classes: fitted state and input width, sample counts, text and 1-D
inputs, label kinds, missing values, sizes bounded by the samples, stratified splits."""

from __future__ import annotations

from variants import Spec, State

COMMON = (
    "import numpy as np\nimport pandas as pd\n"
    "from sklearn.linear_model import LogisticRegression, LinearRegression\n"
    "from sklearn.ensemble import RandomForestClassifier\n"
    "from sklearn.model_selection import train_test_split\n"
    "from sklearn.preprocessing import StandardScaler\n"
    "from sklearn.metrics import accuracy_score, f1_score, mean_squared_error\n"
    "rng = np.random.default_rng(0)"
)
NAMINGS = [
    {"X": "X", "y": "y", "m": "model", "n": "120", "df": "df"},
    {"X": "X_train", "y": "y_train", "m": "clf", "n": "40", "df": "train"},
    {"X": "feats", "y": "target", "m": "est", "n": "900", "df": "data"},
]


def frame(extra: str = "") -> str:
    return (
        "$df = pd.DataFrame({'age': rng.integers(18, 80, $n), 'income': rng.normal(50, 10, $n).round(1), "
        + extra
        + "'label': np.arange($n) % 2})"
    )


SPECS = [
    Spec(
        rule="sklearn-input",
        generator="sklearn-feature-count",
        common=COMMON,
        states=[
            State(
                "fewer",
                "$m = LogisticRegression().fit(rng.normal(size=($n, 5)), np.arange($n) % 2)\n"
                "$X = rng.normal(size=(30, 4))",
                crash=True,
            ),
            State(
                "more",
                "$m = RandomForestClassifier(n_estimators=5).fit(rng.normal(size=($n, 3)), np.arange($n) "
                "% 2)\n"
                "$X = rng.normal(size=(30, 6))",
                crash=True,
            ),
            State(
                "frame-narrower",
                "$m = LinearRegression().fit(pd.DataFrame(rng.normal(size=($n, 3)), "
                "columns=list('abc')), np.arange($n))\n"
                "$X = pd.DataFrame(rng.normal(size=(30, 2)), columns=list('ab'))",
                crash=True,
            ),
            State(
                "same",
                "$m = LogisticRegression().fit(rng.normal(size=($n, 5)), np.arange($n) % 2)\n"
                "$X = rng.normal(size=(30, 5))",
                crash=False,
            ),
            State(
                "same-frame",
                "$m = LinearRegression().fit(pd.DataFrame(rng.normal(size=($n, 3)), "
                "columns=list('abc')), np.arange($n))\n"
                "$X = pd.DataFrame(rng.normal(size=(30, 3)), columns=list('abc'))",
                crash=False,
            ),
        ],
        forms=[
            "$m.predict($X)",
            "preds = $m.predict($X)\npreds[:5]",
            "$m.predict($X[:10])",
            "scores = $m.predict($X)\nlen(scores)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="sklearn-input",
        generator="sklearn-not-fitted",
        common=COMMON,
        states=[
            State(
                "never-fitted",
                "$m = LogisticRegression(max_iter=200)\n$X = rng.normal(size=($n, 3))",
                crash=True,
            ),
            State(
                "fitted",
                "$X = rng.normal(size=($n, 3))\n$m = LogisticRegression(max_iter=200).fit($X, "
                "np.arange($n) % 2)",
                crash=False,
            ),
        ],
        forms=[
            "$m.predict($X)",
            "$m.predict_proba($X)[:, 1]",
            "$m.score($X, np.arange($n) % 2)",
            "probs = $m.predict_proba($X)\nprobs.shape",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="sklearn-input",
        generator="sklearn-fresh-estimator",
        common=COMMON,
        states=[
            State("data", "$X = rng.normal(size=($n, 3))\n$y = np.arange($n) % 2", crash=True),
        ],
        forms=[
            "$m = LogisticRegression()\n$m.predict($X)",
            "from sklearn.svm import SVC\n$m = SVC(C=2.0)\npred = $m.predict($X)",
            "$m = RandomForestClassifier(n_estimators=10)\n$m.predict_proba($X)",
            ("$m = LogisticRegression()\n$m.fit($X, $y)\n$m.predict($X)", False),
            ("$m = RandomForestClassifier(n_estimators=10)\n$m.fit($X, $y)\n$m.score($X, $y)", False),
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="inconsistent-length",
        generator="sklearn-sample-counts",
        common=COMMON,
        states=[
            State("y-filtered", "$X = rng.normal(size=($n, 3))\n$y = (np.arange($n) % 2)[:-5]", crash=True),
            State(
                "frame-dropped",
                frame("") + "\n$X = $df[['age', 'income']]\n$y = $df['label'].iloc[: $n // 2]",
                crash=True,
            ),
            State("list-y", "$X = rng.normal(size=($n, 3))\n$y = [0, 1] * ($n // 2 + 1)", crash=True),
            State("aligned", "$X = rng.normal(size=($n, 3))\n$y = np.arange($n) % 2", crash=False),
            State(
                "aligned-frame", frame("") + "\n$X = $df[['age', 'income']]\n$y = $df['label']", crash=False
            ),
        ],
        forms=[
            "$m = LogisticRegression(max_iter=300)\n$m.fit($X, $y)",
            "RandomForestClassifier(n_estimators=5).fit($X, $y)",
            "train_test_split($X, $y, test_size=0.2, random_state=0)",
            "a, b, c, d = train_test_split($X, $y)",
            "accuracy_score($y, np.zeros(len($X), dtype=int))",
            "LinearRegression().fit(X=$X, y=$y)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="inconsistent-length",
        generator="sklearn-split-then-fit",
        common=COMMON,
        states=[
            State("mixed-parts", "$X = rng.normal(size=($n, 3))\n$y = np.arange($n) % 2", crash=True),
        ],
        forms=[
            "Xa, Xb, ya, yb = train_test_split($X, $y, test_size=0.25, random_state=1)\n"
            "LogisticRegression().fit(Xa, yb)",
            "Xa, Xb, ya, yb = train_test_split($X, $y, test_size=0.3)\n$m = "
            "RandomForestClassifier(n_estimators=5)\n$m.fit(Xb, ya)",
            (
                "Xa, Xb, ya, yb = train_test_split($X, $y, random_state=0)\nLinearRegression().fit(Xa, ya)\n"
                "mean_squared_error(yb, LinearRegression().fit(Xa, ya).predict(Xb))",
                False,
            ),
            (
                "Xa, Xb, ya, yb = train_test_split($X, $y, test_size=0.2)\n$m = "
                "LogisticRegression().fit(Xa, ya)\n"
                "accuracy_score(yb, $m.predict(Xb))",
                False,
            ),
        ],
        namings=NAMINGS,
        per_side=24,
    ),
    Spec(
        rule="text-data",
        generator="sklearn-text-features",
        common=COMMON,
        states=[
            State("city", frame("'city': rng.choice(['Paris', 'Oslo', 'Rome'], $n), "), crash=True),
            State("price-text", frame("'price': [f'$${i},000' for i in range($n)], "), crash=True),
            State(
                "category", frame("'city': pd.Categorical(rng.choice(['Paris', 'Oslo'], $n)), "), crash=True
            ),
            State("numeric", frame("'rooms': rng.integers(1, 6, $n), "), crash=False),
            State(
                "encoded",
                frame("'city': rng.choice(['Paris', 'Oslo', 'Rome'], $n), ")
                + "\n$df = pd.get_dummies($df, columns=['city'], dtype=int)",
                crash=False,
            ),
        ],
        forms=[
            "$m = LogisticRegression(max_iter=500)\n$m.fit($df.drop(columns=['label']), $df['label'])",
            "$X = $df.drop('label', axis=1)\nRandomForestClassifier(n_estimators=5).fit($X, $df['label'])",
            "StandardScaler().fit_transform($df)",
            "LinearRegression().fit($df.drop(columns=['label']), $df['income'])",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="sklearn-input",
        generator="sklearn-one-dimensional",
        common=COMMON,
        states=[
            State("series", frame(""), crash=True),
        ],
        forms=[
            "LinearRegression().fit($df['age'], $df['income'])",
            "$X = $df['age']\n$m = LogisticRegression().fit($X, $df['label'])",
            "StandardScaler().fit_transform($df['income'])",
            "$m = LinearRegression()\n$m.fit($df.age.values, $df.income)",
            ("LinearRegression().fit($df[['age']], $df['income'])", False),
            ("$m = LogisticRegression().fit($df[['age', 'income']], $df['label'])", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="label-type",
        generator="sklearn-continuous-target",
        common=COMMON,
        states=[
            State(
                "price", "$X = rng.normal(size=($n, 3))\n$y = rng.normal(100, 15, $n).round(2)", crash=True
            ),
            State(
                "ratio",
                frame("'ratio': rng.random($n), ") + "\n$X = $df[['age', 'income']]\n$y = $df['ratio']",
                crash=True,
            ),
            State(
                "integral-floats",
                "$X = rng.normal(size=($n, 3))\n$y = (np.arange($n) % 3).astype(float)",
                crash=False,
            ),
            State("ints", "$X = rng.normal(size=($n, 3))\n$y = np.arange($n) % 3", crash=False),
        ],
        forms=[
            "LogisticRegression(max_iter=300).fit($X, $y)",
            "$m = RandomForestClassifier(n_estimators=5)\n$m.fit($X, $y)",
            "from sklearn.svm import SVC\nSVC().fit($X, y=$y)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="label-type",
        generator="sklearn-metric-targets",
        common=COMMON,
        states=[
            State("probabilities", "$y = np.arange($n) % 2\npred = rng.random($n)", crash=True),
            State("multiclass", "$y = np.arange($n) % 3\npred = np.arange($n)[::-1] % 3", crash=True),
            State(
                "yes-no",
                "$y = np.where(np.arange($n) % 2 == 0, 'yes', 'no')\npred = np.roll($y, 1)",
                crash=True,
            ),
            State("binary", "$y = np.arange($n) % 2\npred = np.roll($y, 1)", crash=False),
            State(
                "thresholded",
                "$y = np.arange($n) % 2\npred = (rng.random($n) > 0.5).astype(int)",
                crash=False,
            ),
        ],
        forms=[
            "f1_score($y, pred)",
            "from sklearn.metrics import precision_score\nprecision_score($y, pred)",
            "score = f1_score($y, pred)\nprint(score)",
            "from sklearn import metrics\nmetrics.recall_score($y, pred)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-values",
        generator="sklearn-nan",
        common=COMMON,
        states=[
            State(
                "nan-column",
                frame("") + "\n$df.loc[::7, 'income'] = np.nan\n$X = $df[['age', 'income']]",
                crash=True,
            ),
            State(
                "nan-array",
                "$X = rng.normal(size=($n, 3))\n$X[3, 1] = np.nan\n$df = pd.DataFrame({'label': "
                "np.arange($n) % 2})",
                crash=True,
            ),
            State(
                "filled",
                frame("")
                + "\n$df.loc[::7, 'income'] = np.nan\n$df['income'] = $df['income'].fillna(0)\n$X = "
                "$df[['age', 'income']]",
                crash=False,
            ),
            State(
                "clean",
                "$X = rng.normal(size=($n, 3))\n$df = pd.DataFrame({'label': np.arange($n) % 2})",
                crash=False,
            ),
        ],
        forms=[
            "LogisticRegression().fit($X, $df['label'])",
            "$m = LinearRegression()\n$m.fit($X, $df['label'])",
            "from sklearn.svm import SVC\nSVC().fit($X, $df['label'])",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="sklearn-size-parameters",
        common=COMMON + "\nfrom sklearn.decomposition import PCA\nfrom sklearn.cluster import KMeans",
        states=[
            State("few-samples", "$X = rng.normal(size=(6, 20))", crash=True),
            State("few-features", "$X = rng.normal(size=($n, 5))", crash=True),
            State("enough", "$X = rng.normal(size=($n + 20, 12))", crash=False),
        ],
        forms=[
            "PCA(n_components=10).fit($X)",
            "pca = PCA(10)\nreduced = pca.fit_transform($X)",
            "from sklearn.decomposition import PCA as P\nP(n_components=10).fit_transform($X)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="sklearn-stratify",
        common=COMMON,
        states=[
            State(
                "singleton",
                "$X = rng.normal(size=($n, 2))\n$y = np.array(['a', 'b'] * ($n // 2 - 1) + ['a', 'c'])",
                crash=True,
            ),
            State(
                "balanced",
                "$X = rng.normal(size=($n, 2))\n$y = np.array(['a', 'b'] * ($n // 2))",
                crash=False,
            ),
        ],
        forms=[
            "train_test_split($X, $y, stratify=$y, test_size=0.25)",
            "Xa, Xb, ya, yb = train_test_split($X, $y, test_size=0.2, stratify=$y, random_state=0)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="label-type",
        generator="sklearn-one-class",
        common=COMMON + "\nfrom sklearn.svm import SVC\nfrom sklearn.linear_model import SGDClassifier",
        states=[
            State(
                "sorted-subset",
                "X_all = rng.normal(size=(2 * $n, 4))\ny_all = np.repeat([0, 1], $n)\n"
                "$X, $y = X_all[: $n // 2], y_all[: $n // 2]",
                crash=True,
            ),
            State(
                "filtered-frame",
                frame() + "\n$df = $df[$df['label'] == 1]\n$X = $df[['age', 'income']]\n$y = $df['label']",
                crash=True,
            ),
            State(
                "shuffled-subset",
                "X_all = rng.normal(size=(2 * $n, 4))\ny_all = np.repeat([0, 1], $n)\n"
                "order = rng.permutation(2 * $n)\n$X, $y = X_all[order][: $n // 2], y_all[order][: $n // 2]",
                crash=False,
            ),
            State("two-classes", frame() + "\n$X = $df[['age', 'income']]\n$y = $df['label']", crash=False),
        ],
        forms=[
            "LogisticRegression().fit($X, $y)",
            "$m = LogisticRegression(max_iter=200)\n$m.fit($X, $y)\n$m.score($X, $y)",
            "SVC(kernel='linear').fit($X, $y)",
            "$m = SGDClassifier(random_state=0)\n$m.fit($X, $y)",
            ("RandomForestClassifier(n_estimators=3).fit($X, $y)", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-values",
        generator="sklearn-target-nan",
        common=COMMON + "\nfrom sklearn.tree import DecisionTreeRegressor",
        states=[
            State(
                "merged-labels",
                frame() + "\n$df.loc[$df.index[::7], 'label'] = np.nan\n$X = $df[['age', 'income']]\n"
                "$y = $df['label']",
                crash=True,
            ),
            State(
                "array-gap",
                "$X = rng.normal(size=($n, 3))\n$y = (np.arange($n) % 2).astype(float)\n$y[5] = np.nan",
                crash=True,
            ),
            State(
                "dropped",
                frame() + "\n$df.loc[$df.index[::7], 'label'] = np.nan\n$df = $df.dropna()\n"
                "$X = $df[['age', 'income']]\n$y = $df['label']",
                crash=False,
            ),
            State("complete", frame() + "\n$X = $df[['age', 'income']]\n$y = $df['label']", crash=False),
        ],
        forms=[
            "RandomForestClassifier(n_estimators=3).fit($X, $y)",
            "$m = DecisionTreeRegressor(max_depth=2)\n$m.fit($X, $y)",
            "LinearRegression().fit($X, y=$y)",
            "$m = LogisticRegression()\n$m.fit($X, $y)\n$m.score($X, $y)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="sklearn-unseen-label",
        common=COMMON + "\nfrom sklearn.preprocessing import LabelEncoder\nfrom sklearn import preprocessing",
        states=[
            State(
                "new-city",
                "$m = LabelEncoder().fit(['Berlin', 'Madrid', 'Paris', 'Rome'])\n"
                "$df = pd.DataFrame({'city': rng.choice(['Paris', 'Rome', 'Oslo'], $n)})",
                crash=True,
            ),
            State(
                "case-differs",
                "$m = LabelEncoder().fit(['berlin', 'paris'])\n"
                "$df = pd.DataFrame({'city': rng.choice(['Paris', 'paris'], $n)})",
                crash=True,
            ),
            State(
                "known",
                "$m = LabelEncoder().fit(['Berlin', 'Madrid', 'Paris', 'Rome'])\n"
                "$df = pd.DataFrame({'city': rng.choice(['Paris', 'Rome'], $n)})",
                crash=False,
            ),
            State(
                "fitted-on-all",
                "$df = pd.DataFrame({'city': rng.choice(['Paris', 'Rome', 'Oslo'], $n)})\n"
                "$m = LabelEncoder().fit($df['city'])",
                crash=False,
            ),
        ],
        forms=[
            "$m.transform($df['city'])",
            "$df['code'] = $m.transform($df['city'])",
            "codes = $m.transform($df.city.values)\ncodes[:5]",
            ("$m.transform($df['city'].iloc[:0])", False),
        ],
        namings=NAMINGS,
    ),
]
