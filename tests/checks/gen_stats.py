"""Variants of statsmodels and scipy crash classes: missing values and text in exog, endog/exog of
different lengths, paired tests on samples of different lengths."""

from __future__ import annotations

from variants import Spec, State

COMMON = (
    "import numpy as np\nimport pandas as pd\nimport statsmodels.api as sm\nrng = np.random.default_rng(0)"
)
NAMINGS = [
    {"X": "X", "y": "y", "df": "df", "n": "80"},
    {"X": "exog", "y": "endog", "df": "houses", "n": "30"},
    {"X": "design", "y": "price", "df": "data", "n": "600"},
]
FRAME = (
    "$df = pd.DataFrame({'size': rng.normal(100, 20, $n), 'rooms': rng.integers(1, 6, $n), 'price': "
    "rng.normal(3e5, 5e4, $n)"
)

SPECS = [
    Spec(
        rule="missing-values",
        generator="statsmodels-nan",
        common=COMMON,
        states=[
            State(
                "nan",
                FRAME
                + "})\n$df.loc[::9, 'size'] = np.nan\n$X = sm.add_constant($df[['size', 'rooms']])\n$y = "
                "$df['price']",
                crash=True,
            ),
            State(
                "clean",
                FRAME + "})\n$X = sm.add_constant($df[['size', 'rooms']])\n$y = $df['price']",
                crash=False,
            ),
            State(
                "dropped",
                FRAME + "})\n$df.loc[::9, 'size'] = np.nan\n$df = $df.dropna()\n$X = "
                "sm.add_constant($df[['size', 'rooms']])\n$y = $df['price']",
                crash=False,
            ),
        ],
        forms=[
            "sm.OLS($y, $X).fit()",
            "model = sm.OLS($y, $X)\nres = model.fit()",
            "sm.Logit(($y > 3e5).astype(int), $X)",
            "from statsmodels.api import OLS\nOLS($y, $X).fit().params",
            "X_const = sm.add_constant($X)\nsm.OLS($y, X_const).fit()",
            "sm.OLS($y, sm.add_constant($X, has_constant='add')).fit()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="text-data",
        generator="statsmodels-text-exog",
        common=COMMON,
        states=[
            State(
                "city",
                FRAME
                + ", 'city': rng.choice(['A', 'B'], $n)})\n$X = $df[['size', 'city']]\n$y = $df['price']",
                crash=True,
            ),
            State(
                "numeric",
                FRAME
                + ", 'city': rng.choice(['A', 'B'], $n)})\n$X = $df[['size', 'rooms']]\n$y = $df['price']",
                crash=False,
            ),
        ],
        forms=["sm.OLS($y, $X).fit()", "res = sm.OLS($y, $X).fit()\nres.summary()", "sm.OLS($y, $X)"],
        namings=NAMINGS,
    ),
    Spec(
        rule="inconsistent-length",
        generator="stats-lengths",
        common=COMMON + "\nfrom scipy import stats",
        states=[
            State("trimmed", "$X = rng.normal(size=$n)\n$y = rng.normal(size=$n - 3)", crash=True),
            State("same", "$X = rng.normal(size=$n)\n$y = rng.normal(size=$n)", crash=False),
        ],
        forms=[
            "stats.pearsonr($X, $y)",
            "r, p = stats.spearmanr($X, $y)",
            "stats.ttest_rel($X, $y)",
            "sm.OLS($y, $X).fit()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-values",
        generator="scipy-curve-fit-nan",
        common=COMMON + "\nfrom scipy.optimize import curve_fit\nimport scipy.optimize as opt\n"
        "def decay(t, a, k):\n    return a * np.exp(-k * t)",
        states=[
            State(
                "saturated",
                "$X = np.linspace(0, 5, $n)\n$y = 50 * np.exp(-0.4 * $X) + rng.normal(0, 0.5, $n)\n"
                "$y[[3, 7]] = np.nan",
                crash=True,
            ),
            State(
                "series-gap",
                "$X = np.linspace(0, 5, $n)\n$y = pd.Series(50 * np.exp(-0.4 * $X)).shift(2)",
                crash=True,
            ),
            State(
                "x-gap",
                "$X = np.linspace(0, 5, $n)\n$y = 50 * np.exp(-0.4 * $X)\n"
                "$X = np.where($X > 4.9, np.nan, $X)",
                crash=True,
            ),
            State(
                "clean",
                "$X = np.linspace(0, 5, $n)\n$y = 50 * np.exp(-0.4 * $X) + rng.normal(0, 0.5, $n)",
                crash=False,
            ),
            State(
                "dropped",
                "$X = np.linspace(0, 5, $n)\n$y = 50 * np.exp(-0.4 * $X)\n$y[3] = np.nan\n"
                "keep = ~np.isnan($y)\n$X, $y = $X[keep], $y[keep]",
                crash=False,
            ),
        ],
        forms=[
            "curve_fit(decay, $X, $y, p0=(40, 0.3))",
            "params, cov = curve_fit(decay, $X, $y)\nparams",
            "opt.curve_fit(decay, xdata=$X, ydata=$y, p0=[40, 0.3])",
            ("curve_fit(decay, $X, $y, p0=(40, 0.3), nan_policy='omit')", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="statsmodels-seasonal",
        common=COMMON + "\nfrom statsmodels.tsa.seasonal import seasonal_decompose\n"
        "idx = pd.date_range('2020-01-01', periods=48, freq='MS')\n"
        "base = 100 + 20 * np.sin(np.arange(48) * np.pi / 6)",
        states=[
            State("closed-months", "$y = pd.Series(base, index=idx)\n$y.iloc[[5, 6]] = 0", crash=True),
            State("returns", "$y = pd.Series(base, index=idx).pct_change().fillna(0)", crash=True),
            State("gap", "$y = pd.Series(base, index=idx)\n$y.iloc[10] = np.nan", crash=True),
            State("positive", "$y = pd.Series(base, index=idx)", crash=False),
            State("array", "$y = base.copy()", crash=False),
        ],
        forms=[
            "seasonal_decompose($y, model='multiplicative', period=12)",
            "res = seasonal_decompose($y, model='mul', period=12)\nres.seasonal[:5]",
            "sm.tsa.seasonal_decompose($y, model='multiplicative', period=12).trend",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-key",
        generator="statsmodels-formula-names",
        common=COMMON + "\nimport statsmodels.formula.api as smf\nfrom statsmodels.formula.api import ols",
        states=[
            State("renamed", FRAME + "})\n$df = $df.rename(columns={'rooms': 'n_rooms'})", crash=True),
            State("never-made", FRAME + "})\n$df = $df.drop(columns='rooms')", crash=True),
            State("column", FRAME + "})", crash=False),
            State(
                "notebook-variable",
                FRAME + "})\nrooms = $df['rooms'].to_numpy()\n$df = $df.drop(columns='rooms')",
                crash=False,
            ),
        ],
        forms=[
            "smf.ols('price ~ size + rooms', data=$df).fit()",
            "fit = ols('price ~ np.log(size) + rooms', data=$df).fit()\nfit.params",
            "smf.ols(formula='price ~ rooms + I(size ** 2)', data=$df).fit().rsquared",
            "smf.glm('price ~ rooms', $df).fit().params",
        ],
        namings=NAMINGS,
    ),
]
