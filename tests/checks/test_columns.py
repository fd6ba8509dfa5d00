"""Missing columns, dict keys and string indices, judged on real objects through the real probe."""

from __future__ import annotations

from typing import Any

import pytest
from support import Checker

from crane_jupyterlab.checks import check
from crane_jupyterlab.kernel import probe

pd = pytest.importorskip("pandas")
np = pytest.importorskip("numpy")


@pytest.fixture
def ns() -> dict[str, Any]:
    train = pd.DataFrame({"PassengerId": [1, 2, 3], " Age": [22.0, None, 30.0], "Survived": [0, 1, 1]})
    return {
        "pd": pd,
        "np": np,
        "train": train,
        "hist": {"loss": [0.5], "accuracy": [0.7]},
        "arr": np.zeros((3, 2)),
        "user_fn": lambda df: df,
        "features": ["PassengerId", "Fare"],
        "present": ["PassengerId", "Survived"],
    }


@pytest.mark.parametrize(
    "source",
    [
        "train['Age'].describe()",
        "train['Age'] = train['Age'].fillna(0)",  # the read runs before the assignment
        "train[['PassengerId', 'Age']]",
        "x = train.drop(columns=['Cabin'])",
        "x = train.drop(['Cabin'], axis=1)",
        "train['Age'] += 1",
        "hist['acc']",
        "arr['id']",
        "arr['id'] = 1",
        "col = 'Age'\ntrain[col]",  # a key the cell binds to a constant
        "features\ntrain[features]",  # a kernel list of labels, one of them missing
        "cols = ['Survived', 'Fare']\ntrain.drop(columns=cols)",
        "train.groupby('Survived').agg({'PassengerId': 'count', 'Fare': 'sum'})",
        "train.groupby('Survived').agg(n=('PassengerId', 'count'), fare=('Fare', 'mean'))",
        "train.agg({'Fare': 'sum'})",
        "train.pivot_table(index='Survived', values='Fare')",
    ],
)
def test_missing_keys_are_crashes(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == ["missing-key"]
    with pytest.raises((KeyError, IndexError, ValueError, TypeError)):  # and it really does crash
        exec(source, ns)


@pytest.mark.parametrize(
    "source",
    [
        "train[' Age'].describe()",
        "train['Age'] = 1\ntrain['Age'].describe()",  # created first
        "train = pd.DataFrame({'Age': [1]})\ntrain['Age']",  # reassigned: unknown frame
        "user_fn(train)\ntrain['Age']",  # user code may have added the column
        "train.insert(0, 'Age', 1)\ntrain['Age']",  # unknown method: may mutate
        "if 'Age' in train:\n    train['Age']",
        "try:\n    train['Age']\nexcept KeyError:\n    pass",
        "col = 'Age' if len(train) > 5 else ' Age'\ntrain[col]",  # decided by a branch: unknown key
        "present\ntrain[present]",
        "present.append('Fare')\ntrain[present]",  # the list changed before the read
        "train.groupby('Survived').agg({'PassengerId': 'count'})",
        "x = train.drop(columns=['Cabin'], errors='ignore')",
        "x = train.drop(['Cabin'])",  # axis=0: row labels, not columns
        "hist['loss']",
        "y = hist.get('acc')",
        "arr[0]",
    ],
)
def test_silent_when_not_certain(ns: dict[str, Any], source: str, rules: Checker) -> None:
    assert rules(source, ns) == []


def test_message_and_evidence_name_the_column(ns: dict[str, Any]) -> None:
    source = "train['Age'].describe()"
    (finding,) = check(source, probe.run(source, {}, namespace=ns))
    assert "KeyError" in finding.message and "'Age'" in finding.message and finding.line == 1
    assert any("Age" in e for e in finding.evidence)


def test_wide_frames_use_the_probes_live_lookup(rules: Checker) -> None:
    wide = pd.DataFrame({f"c{i}": [i] for i in range(300)})  # more columns than the probe lists
    assert rules("wide['nope']", {"wide": wide}) == ["missing-key"]
    assert rules("wide['c299']", {"wide": wide}) == []


def test_multiindex_columns_are_not_misread(rules: Checker) -> None:
    frame = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]))
    assert rules("frame['a']", {"frame": frame}) == []


def test_merge_of_numbers_with_strings(rules: Checker) -> None:
    orders = pd.DataFrame({"customer_id": [1, 2], "amount": [3.0, 4.0]})
    customers = pd.DataFrame({"customer_id": ["1", "2"], "segment": ["a", "b"]}).astype(
        {"customer_id": "str"}
    )
    ns = {"pd": pd, "orders": orders, "customers": customers, "ok": orders.rename(columns={"amount": "x"})}
    source = "m = orders.merge(customers, on='customer_id')"
    (finding,) = check(source, probe.run(source, {}, namespace=ns))
    assert finding.rule == "merge-dtypes" and "customer_id" in finding.message
    with pytest.raises(ValueError):
        exec(source, ns)
    assert rules("m = orders.merge(ok, on='customer_id')", ns) == []
    assert rules("m = pd.merge(orders, ok, on='customer_id')", ns) == []


def test_seaborn_variable_naming_no_column() -> None:
    sns = pytest.importorskip("seaborn")
    import matplotlib

    matplotlib.use("Agg")
    train = pd.DataFrame({"age": [22.0, 38.0, 26.0], "survived": [0, 1, 1]})
    ns = {"sns": sns, "train": train, "indexed": train.set_index("survived")}
    for source in (
        "sns.histplot(data=train, x='Age', hue='survived')",
        "sns.histplot(train, x='age', hue='Survived')",  # data positional (seaborn >= 0.12)
        "sns.catplot(data=train, x='age', col='sex')",
    ):
        result = probe.run(source, {}, namespace=ns)
        (finding,) = check(source, result)
        assert finding.rule == "missing-key" and finding.message.startswith("ValueError: Could not interpret")
        with pytest.raises(ValueError):
            exec(source, dict(ns))
    for source in (
        "sns.histplot(data=train, x='age', hue='survived')",
        "sns.histplot(data=indexed, x='age', hue='survived')",  # an index level's name is accepted
        "try:\n    sns.histplot(data=train, x='Age')\nexcept ValueError:\n    pass",
        "train = train.rename(columns={'age': 'Age'})\nsns.histplot(data=train, x='Age')",
    ):
        assert check(source, probe.run(source, {}, namespace=ns)) == [], source
        exec(source, dict(ns))


def _health() -> Any:
    """Columns on two levels (subject, type), as in the Python Data Science Handbook's `health_data`."""
    columns = pd.MultiIndex.from_product([["Bob", "Guido", "Sue"], ["HR", "Temp"]], names=["subject", "type"])
    return pd.DataFrame(np.ones((4, 6)), columns=columns)


@pytest.mark.parametrize(
    "source",
    [
        "health_data['Guido', 'HR']",
        "health_data[('Guido', 'HR')].mean()",
        "health_data['Guido']",
        "health_data.loc[:, ('Bob', 'Temp')]",
        "flat[['a', 'b']]",
    ],
)
def test_a_tuple_key_is_one_label_matched_by_levels(source: str, messages: Checker) -> None:
    ns = {"health_data": _health(), "flat": pd.DataFrame({"a": [1], "b": [2]})}
    assert messages(source, ns) == []
    exec(source, ns)  # runs


@pytest.mark.parametrize(
    "source",
    [
        "health_data['Ann', 'HR']",  # no such first level
        "health_data['Guido', 'Pulse']",  # no such second level under 'Guido'
        "flat['a', 'b']",  # flat columns: the tuple itself is not a label
    ],
)
def test_a_tuple_key_missing_from_the_columns(source: str, messages: Checker) -> None:
    ns = {"health_data": _health(), "flat": pd.DataFrame({"a": [1], "b": [2]})}
    (message,) = messages(source, ns)
    assert message.startswith("KeyError: (")
    with pytest.raises(KeyError):
        exec(source, ns)
