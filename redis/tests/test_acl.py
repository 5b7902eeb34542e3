# Copyright 2026 The bloomery Authors. SPDX-License-Identifier: Apache-2.0
"""ACLs cover the BF.* commands: key specs say which commands read and which write a key (%R~ and
%W~ key permissions), and docs/REDIS.md's recipe for Redis 7.0, which puts module commands in no ACL
category, refuses every BF write to a user whose rules say -@write."""
import pytest
import redis

WRITES = [
    ("BF.RESERVE", "big", "0.0001", "100000000"),
    ("BF.ADD", "f", "x"),
    ("BF.MADD", "f", "x", "y"),
    ("BF.INSERT", "f", "ITEMS", "x"),
    ("BF.MERGE", "f", "f"),
    ("BF.LOADCHUNK", "g", "1", b"BLMRDUMP" + (16).to_bytes(8, "little")),
]
READS = [
    ("BF.EXISTS", "f", "a"),
    ("BF.MEXISTS", "f", "a", "b"),
    ("BF.INFO", "f"),
    ("BF.CARD", "f"),
    ("BF.DEBUG", "f"),
]
# docs/REDIS.md: what an operator on Redis 7.0 appends to a user's rules that say -@write.
RECIPE_7_0 = "-bf.reserve -bf.add -bf.madd -bf.insert -bf.merge -bf.loadchunk"


def server_version(r):
    return tuple(int(part) for part in r.info("server")["redis_version"].split(".")[:2])


def user(server, name, *rules):
    server.client().execute_command("ACL", "SETUSER", name, "on", ">pw", *rules)
    return server.client(username=name, password="pw")


@pytest.fixture
def acl_server(server):
    r = server.client()
    r.execute_command("BF.RESERVE", "f", 0.01, 1000)
    r.execute_command("BF.ADD", "f", "a")
    return server


def refused(client, command):
    with pytest.raises(redis.exceptions.NoPermissionError):
        client.execute_command(*command)


def test_key_specs_say_what_each_command_does(acl_server):
    r = acl_server.client()

    def flags(*command):
        return [set(f.decode() for f in key_flags)
                for _, key_flags in r.execute_command("COMMAND GETKEYSANDFLAGS", *command)]

    for command in READS + [("BF.SCANDUMP", "f", "0")]:
        assert flags(*command) == [{"RO", "access"}], command
    for command in WRITES[:4]:
        assert flags(*command) == [{"RW", "insert"}], command
    assert flags("BF.LOADCHUNK", "g", "1", "x") == [{"RW", "update"}]
    assert flags("BF.MERGE", "d", "s1", "s2") == [{"RW", "insert"}, {"RO", "access"},
                                                   {"RO", "access"}]


def test_the_7_0_recipe_refuses_every_write_and_keeps_reads(acl_server):
    nowrite = user(acl_server, "nowrite", "~*", "&*", "+@all", "-@write", *RECIPE_7_0.split())
    for command in WRITES:
        refused(nowrite, command)
    assert nowrite.execute_command("BF.EXISTS", "f", "a") == 1
    assert nowrite.execute_command("BF.SCANDUMP", "f", 0)[0] == 1
    r = acl_server.client()
    assert r.exists("big") == 0 and r.exists("g") == 0
    assert r.execute_command("BF.CARD", "f") == 1


def test_write_category_on_this_server(acl_server):
    """7.2+ (SetCommandACLCategories) puts the writers in @write and the readers in @read; 7.0
    cannot, which is why the recipe exists: this checks whichever the server is."""
    r = acl_server.client()
    writers = {b"bf.reserve", b"bf.add", b"bf.madd", b"bf.insert", b"bf.merge", b"bf.loadchunk"}
    readers = {b"bf.exists", b"bf.mexists", b"bf.info", b"bf.card", b"bf.scandump", b"bf.debug"}
    in_write = set(r.execute_command("ACL", "CAT", "write"))
    in_read = set(r.execute_command("ACL", "CAT", "read"))
    nowrite = user(acl_server, "nowrite", "~*", "&*", "+@all", "-@write")
    reader = user(acl_server, "reader", "~*", "+@read")
    if server_version(r) >= (7, 2):
        assert writers <= in_write and not readers & in_write
        assert readers <= in_read and not writers & in_read
        for command in WRITES:
            refused(nowrite, command)
        assert reader.execute_command("BF.EXISTS", "f", "a") == 1
    else:
        # Redis 7.0: module commands are in no category, so -@write alone lets every BF write
        # through (the report) and +@read lets no BF read.
        assert not (writers | readers) & (in_write | in_read)
        assert nowrite.execute_command("BF.ADD", "f", "by nowrite") == 1
        refused(reader, ("BF.EXISTS", "f", "a"))


def test_read_only_key_permission_runs_reads_only(acl_server):
    reader = user(acl_server, "reader", "%R~*", "+@all")
    assert reader.execute_command("BF.EXISTS", "f", "a") == 1
    assert reader.execute_command("BF.MEXISTS", "f", "a", "b") == [1, 0]
    assert reader.execute_command("BF.CARD", "f") == 1
    assert reader.execute_command("BF.INFO", "f", "CAPACITY") == [1000]
    assert reader.execute_command("BF.SCANDUMP", "f", 0)[0] == 1
    assert reader.execute_command("BF.DEBUG", "f")[0] == b"size:1"
    for command in WRITES:
        refused(reader, command)


def test_write_only_key_permission_cannot_read(acl_server):
    writer = user(acl_server, "writer", "%W~*", "+@all")
    for command in READS + [("BF.SCANDUMP", "f", "0"), ("BF.MERGE", "d", "f")]:
        refused(writer, command)
