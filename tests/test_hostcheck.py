"""The Host check shared by `uxbench view`, `human serve` and `judge serve` (`uxbench.hostcheck`): malformed Host
headers are refused whole, never cut down to a part that passes; `--allow-host` takes host names only."""

from __future__ import annotations

import pytest

from uxbench.errors import ConfigError
from uxbench.hostcheck import HostCheck, allowed_names, host_name


@pytest.mark.parametrize("header", [
    "127.0.0.1:18721@evil.example.com", "evil.example.com@127.0.0.1", "127.0.0.1:18721/x", "127.0.0.1:", "127.0.0.1:x",
    "127.0.0.1:8321:1", "127.0.0.1 evil", "::1", "[::1]x", "[::1]:", "[evil.example.com]:80", "[]", "user@localhost",
    "localhost\\@evil", "-localhost", "local_host?x=1", "127.0.0.1:123456",
])
def test_a_malformed_host_header_is_refused(header: str) -> None:
    assert host_name(header) is None
    assert not HostCheck("127.0.0.1").allows(header)
    assert not HostCheck("0.0.0.0", ["*.example.com"]).allows(header)


@pytest.mark.parametrize(("header", "name"), [
    ("127.0.0.1:18721", "127.0.0.1"), ("LOCALHOST.:80", "localhost"), ("[::1]:8000", "::1"), ("[::1]", "::1"),
    ("judge.lan", "judge.lan"), (" localhost ", "localhost"),
])
def test_a_well_formed_host_header_names_its_host(header: str, name: str) -> None:
    assert host_name(header) == name
    assert HostCheck("127.0.0.1", ["judge.lan"]).allows(header)


@pytest.mark.parametrize("value", ["*", " * "])
def test_allow_host_star_is_refused_with_the_reason(value: str) -> None:
    with pytest.raises(ConfigError, match="any name reach the server"):
        HostCheck("127.0.0.1", [value])


@pytest.mark.parametrize("value", ["evil.example.com:80", "http://judge.lan/", "*.org", "*foo", "a b", "user@host"])
def test_allow_host_takes_host_names_only(value: str) -> None:
    with pytest.raises(ConfigError, match="not a host name or address"):
        allowed_names([value])


def test_allow_host_names_and_domains_are_kept() -> None:
    assert allowed_names(["Judge.LAN.", "*.Example.org", "fe80::1", "[::1]", ""]) == [
        "judge.lan", "*.example.org", "fe80::1", "::1"]
    check = HostCheck("127.0.0.1", ["*.example.org"])
    assert check.allows("a.example.org:80") and not check.allows("example.org") and not check.allows("evil.org")
