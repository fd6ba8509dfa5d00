"""Variants of pandas crash classes: missing columns, joins on mismatched keys, conversions of text to
numbers, accessors on the wrong dtype."""

from __future__ import annotations

from variants import Spec, State

COMMON = "import numpy as np\nimport pandas as pd"
NAMINGS = [
    {"df": "df", "n": "12", "other": "extra"},
    {"df": "train", "n": "400", "other": "lookup"},
    {"df": "sales_2023", "n": "60000", "other": "regions"},  # sampled by the probe
]
FRAME = "$df = pd.DataFrame({%s, 'Fare': np.linspace(1.0, 90.0, $n), 'Sex': ['m', 'f'] * ($n // 2)})"

SPECS = [
    Spec(
        rule="missing-key",
        generator="pandas-missing-column",
        common=COMMON,
        states=[
            State("renamed", FRAME % "'age_years': np.arange($n) % 80", crash=True),
            State("other-case", FRAME % "'age': np.arange($n) % 80", crash=True),
            State(
                "dropped-before",
                FRAME % "'Age': np.arange($n) % 80" + "\n$df = $df.drop(columns=['Age'])",
                crash=True,
            ),
            State("present", FRAME % "'Age': np.arange($n) % 80", crash=False),
            State("present-float", FRAME % "'Age': np.arange($n) * 0.5", crash=False),
        ],
        forms=[
            "$df['Age'].mean()",
            "$df[['Age', 'Fare']].describe()",
            "$df['Age'].fillna(0).head()",
            "$df.dropna(subset=['Age'])",
            "$df.drop(columns=['Age'])",
            "$df.drop(['Age'], axis=1)",
            "$df.set_index('Age')",
            "subset = $df[['Fare', 'Age']]\nsubset.shape",
            "pd.get_dummies($df, columns=['Age'])",
            "$df.dropna()['Age'].max()",
            "clean = $df.copy()\nclean['Age'].median()",
            "$df.sort_values('Age')",
            "$df.sort_values(by=['Fare', 'Age'])",
            "$df.groupby('Age').size()",
            "$df.groupby('Sex')['Age'].mean()",
            "$df.loc[:, 'Age']",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="merge-dtypes",
        generator="pandas-merge-dtypes",
        common=COMMON,
        states=[
            State(
                "str-key",
                "$df = pd.DataFrame({'key': np.arange($n) % 7, 'v': np.arange($n)})\n"
                "$other = pd.DataFrame({'key': [str(i) for i in range(7)], 'w': range(7)})",
                crash=True,
            ),
            State(
                "str-key-left",
                "$df = pd.DataFrame({'key': [str(i % 7) for i in range($n)], 'v': np.arange($n)})\n"
                "$other = pd.DataFrame({'key': np.arange(7), 'w': range(7)})",
                crash=True,
            ),
            State(
                "read-as-text",
                "import io\n$df = pd.DataFrame({'key': np.arange($n) % 7, 'v': np.arange($n)})\n"
                "$other = pd.read_csv(io.StringIO('key,w\\n1,2\\n3,4'), dtype=str)",
                crash=True,
            ),
            State(
                "same-int",
                "$df = pd.DataFrame({'key': np.arange($n) % 7, 'v': np.arange($n)})\n"
                "$other = pd.DataFrame({'key': np.arange(7), 'w': range(7)})",
                crash=False,
            ),
            State(
                "same-str",
                "$df = pd.DataFrame({'key': [str(i % 7) for i in range($n)], 'v': np.arange($n)})\n"
                "$other = pd.DataFrame({'key': [str(i) for i in range(7)], 'w': range(7)})",
                crash=False,
            ),
        ],
        forms=[
            "$df.merge($other, on='key')",
            "$df.merge($other, on='key', how='left')",
            "pd.merge($df, $other, on='key')",
            "merged = $df.merge($other, on=['key'], how='inner')\nmerged.shape",
            "pd.merge($df, $other, on='key', how='outer').head()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-conversion",
        generator="pandas-text-to-number",
        common=COMMON,
        states=[
            State(
                "thousands",
                "$df = pd.DataFrame({'Installs': ['1,000+', '500', '10'] * ($n // 3) + ['7'] * ($n % 3)})",
                crash=True,
            ),
            State(
                "mostly-numbers",
                "vals = [str(i) for i in range($n)]\nvals[3] = 'Varies with device'\n"
                "$df = pd.DataFrame({'Installs': vals})",
                crash=True,
            ),
            State(
                "rare-text",
                "vals = [str(i) for i in range(60_000)]\nvals[30_001] = 'Varies with device'\n"
                "$df = pd.DataFrame({'Installs': vals})",
                crash=True,
                certain=None,
            ),
            State("currency", "$df = pd.DataFrame({'Installs': ['$$12.5', '$$3'] * ($n // 2)})", crash=True),
            State(
                "object-mixed",
                "vals = list(range($n))\nvals[3] = 'n/a?'\n$df = pd.DataFrame({'Installs': "
                "pd.Series(vals, dtype=object)})",
                crash=True,
            ),
            State("clean-text", "$df = pd.DataFrame({'Installs': [str(i) for i in range($n)]})", crash=False),
            State("numbers", "$df = pd.DataFrame({'Installs': np.arange($n) * 1.5})", crash=False),
        ],
        forms=[
            "$df['Installs'].astype(float)",
            "$df['Installs'].astype('float64').sum()",
            "$df['Installs'] = $df['Installs'].astype(float)",
            "pd.to_numeric($df['Installs'])",
            "values = pd.to_numeric($df['Installs'], errors='raise')\nvalues.mean()",
            "$df.Installs.astype(np.float32)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-conversion",
        generator="pandas-nan-to-int",
        common=COMMON,
        states=[
            State(
                "nan",
                "$df = pd.DataFrame({'Year': np.where(np.arange($n) % 5 == 0, np.nan, 2000.0 + "
                "np.arange($n) % 20)})",
                crash=True,
            ),
            State(
                "one-nan",
                "y = 2000.0 + np.arange($n) % 20\ny[-1] = np.nan\n$df = pd.DataFrame({'Year': y})",
                crash=True,
            ),
            State("no-nan", "$df = pd.DataFrame({'Year': 2000.0 + np.arange($n) % 20})", crash=False),
            State(
                "filled",
                "$df = pd.DataFrame({'Year': np.where(np.arange($n) % 5 == 0, np.nan, 2000.0)})\n"
                "$df['Year'] = $df['Year'].fillna(0)",
                crash=False,
            ),
        ],
        forms=[
            "$df['Year'].astype(int)",
            "$df['Year'].astype('int64').max()",
            "$df['Year'] = $df['Year'].astype(np.int32)",
            "years = $df['Year'].astype(int)\nyears.head()",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="pandas-accessor",
        common=COMMON,
        states=[
            State("int-zip", "$df = pd.DataFrame({'code': np.arange($n) + 10000})", crash=True),
            State("float", "$df = pd.DataFrame({'code': np.arange($n) * 0.5})", crash=True),
            State("text", "$df = pd.DataFrame({'code': [f'{i:05d}' for i in range($n)]})", crash=False),
        ],
        forms=[
            "$df['code'].str.zfill(5)",
            "$df['code'].str[:3]",
            "$df['code'].str.len().max()",
            "prefix = $df['code'].str.slice(0, 2)\nprefix.nunique()",
            "$df.code.str.contains('1')",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-key",
        generator="pandas-label-lists",
        common=COMMON,
        states=[
            State(
                "list-from-train",
                FRAME % "'Age': np.arange($n) % 80"
                + "\n$other = $df.drop(columns=['Age'])\ncols = [c for c in $df.columns if c != 'Sex']",
                crash=True,
            ),
            State(
                "typo-in-list",
                FRAME % "'Age': np.arange($n) % 80" + "\n$other = $df.copy()\ncols = ['Age', 'fare']",
                crash=True,
            ),
            State(
                "list-fits",
                FRAME % "'Age': np.arange($n) % 80" + "\n$other = $df.copy()\ncols = ['Age', 'Fare']",
                crash=False,
            ),
            State(
                "list-from-other",
                FRAME % "'Age': np.arange($n) % 80"
                + "\n$other = $df.drop(columns=['Age'])\ncols = list($other.columns)",
                crash=False,
            ),
        ],
        forms=[
            "$other[cols]",
            "$other[cols].describe()",
            "X_test = $other[cols]\nX_test.shape",
            "$other.loc[:, cols].head()",
            "$other.dropna(subset=cols)",
            "$other.drop(columns=cols)",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="missing-key",
        generator="pandas-aggregate",
        common=COMMON,
        states=[
            State("no-revenue", FRAME % "'units': np.arange($n) % 9", crash=True),
            State(
                "revenue-dropped",
                FRAME % "'units': np.arange($n) % 9" + "\n$df['revenue'] = $df['units'] * 2.5"
                "\n$df = $df.drop(columns='revenue')",
                crash=True,
            ),
            State(
                "revenue",
                FRAME % "'units': np.arange($n) % 9" + "\n$df['revenue'] = $df['units'] * $df['Fare']",
                crash=False,
            ),
        ],
        forms=[
            "$df.groupby('Sex').agg({'units': 'sum', 'revenue': 'sum'})",
            "$df.groupby('Sex').aggregate({'revenue': ['mean', 'max']})",
            "$df.groupby(['Sex']).agg(total=('revenue', 'sum'), n=('units', 'count'))",
            "summary = $df.groupby(by='Sex').agg({'revenue': 'mean'})\nsummary.round(1)",
            "$df.agg({'revenue': 'sum', 'units': 'max'})",
            "$df.pivot_table(index='Sex', values='revenue', aggfunc='sum')",
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-value",
        generator="pandas-groupby-tuple",
        common=COMMON,
        states=[
            State("frame", FRAME % "'pts': np.arange($n) % 40, 'ast': np.arange($n) % 7", crash=True),
            State(
                "frame-copy",
                FRAME % "'pts': np.arange($n) % 40, 'ast': np.arange($n) % 7" + "\n$df = $df.copy()",
                crash=True,
            ),
        ],
        forms=[
            "$df.groupby('Sex')['pts', 'ast'].mean()",
            "avg = $df.groupby('Sex')['pts', 'ast'].sum()\navg",
            "$df.groupby(['Sex'])['pts', 'ast'].agg('max')",
            ("$df.groupby('Sex')[['pts', 'ast']].mean()", False),
            ("$df.groupby('Sex')[('pts',)].mean()", False),
            ("$df.groupby('Sex')['pts'].mean()", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="text-data",
        generator="pandas-series-reduction",
        common=COMMON,
        states=[
            State(
                "read-as-text",
                "import io\nrows = '\\n'.join(f's{i},{i % 90 + 0.5}' if i % 17 else f's{i},absent' "
                "for i in range($n))\n$df = pd.read_csv(io.StringIO('student,score\\n' + rows))",
                crash=True,
            ),
            State("str-dtype", "$df = pd.DataFrame({'score': [str(i % 90) for i in range($n)]})", crash=True),
            State(
                "category",
                "$df = pd.DataFrame({'score': pd.Categorical([i % 5 for i in range($n)])})",
                crash=True,
            ),
            State(
                "object-text",
                "$df = pd.DataFrame({'score': pd.Series(['n/a'] + [i * 0.5 for i in range($n - 1)], "
                "dtype=object)})",
                crash=True,
            ),
            State(
                "converted",
                "$df = pd.DataFrame({'score': [str(i % 90) for i in range($n)]})"
                "\n$df['score'] = pd.to_numeric($df['score'])",
                crash=False,
            ),
            State("floats", "$df = pd.DataFrame({'score': np.arange($n) * 0.5})", crash=False),
            State(
                "object-numbers",
                "$df = pd.DataFrame({'score': pd.Series([i * 0.5 for i in range($n)], dtype=object)})",
                crash=False,
            ),
        ],
        forms=[
            "$df['score'].mean()",
            "$df['score'].median()",
            "avg = $df['score'].mean()\nprint(avg)",
            "$df.score.std()",
            "s = $df['score']\ns.var()",
            ("$df['score'].count()", False),
            ("$df['score'].nunique()", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="bad-conversion",
        generator="pandas-date-format",
        common=COMMON,
        states=[
            State(
                "us-dates-appended",
                "$df = pd.DataFrame({'date': [f'2023-{1 + i % 12:02d}-15' for i in range($n)]})\n"
                "late = pd.DataFrame({'date': ['01/15/2024', '02/15/2024']})\n"
                "$df = pd.concat([$df, late], ignore_index=True)",
                crash=True,
            ),
            State(
                "with-time",
                "$df = pd.DataFrame({'date': [f'2023-{1 + i % 12:02d}-15 08:30' for i in range($n)]})",
                crash=True,
            ),
            State(
                "iso",
                "$df = pd.DataFrame({'date': [f'2023-{1 + i % 12:02d}-{1 + i % 28}' for i in range($n)]})",
                crash=False,
            ),
            State(
                "iso-with-gaps",
                "$df = pd.DataFrame({'date': [f'2023-{1 + i % 12:02d}-15' if i % 5 else None "
                "for i in range($n)]})",
                crash=False,
            ),
        ],
        forms=[
            "pd.to_datetime($df['date'], format='%Y-%m-%d')",
            "$df['date'] = pd.to_datetime($df['date'], format='%Y-%m-%d')",
            "dates = pd.to_datetime($df.date, format='%Y-%m-%d', utc=True)\ndates.min()",
            ("pd.to_datetime($df['date'], format='%Y-%m-%d', errors='coerce')", False),
            ("pd.to_datetime($df['date'], format='mixed')", False),
        ],
        namings=NAMINGS,
    ),
    Spec(
        rule="type-error",
        generator="pandas-resample-index",
        common=COMMON,
        states=[
            State(
                "date-column",
                "$df = pd.DataFrame({'date': pd.date_range('2024-01-01', periods=$n, freq='h'), "
                "'temp': np.arange($n) % 17 * 1.0})",
                crash=True,
            ),
            State(
                "reset",
                "$df = pd.DataFrame({'temp': np.arange($n) * 1.0}, "
                "index=pd.date_range('2024-01-01', periods=$n, freq='h')).reset_index()",
                crash=True,
            ),
            State(
                "date-index",
                "$df = pd.DataFrame({'temp': np.arange($n) * 1.0}, "
                "index=pd.date_range('2024-01-01', periods=$n, freq='h'))",
                crash=False,
            ),
        ],
        forms=[
            "$df.resample('D').mean()",
            "daily = $df.resample('W')['temp'].max()\ndaily.head()",
            "$df['temp'].resample('D').sum()",
        ],
        namings=NAMINGS,
    ),
]
