"""``sync.test`` and ``sync.forget``: what the panel's "Test connection" and "Stop syncing" run.

Against the real test servers (tests/support/couch_server.cjs), read back with plain HTTP.
"""

from __future__ import annotations

import base64

from behavior import Ctx, raises
from behavior.payloads import text
from behavior.sync import AUTH_PASSWORD, AUTH_USER, all_docs, new_database, server, synced_store
from panelot.errors import NetworkError
from panelot.idb.errors import NotFoundError


async def case_sync_test_says_the_database_answers_and_writes_nothing(ctx: Ctx) -> None:
    store, database = await synced_store(ctx, auth=True)
    tid = await store.create_thread("Not pushed by a test")
    await store.append(tid, "user_message", text("hello"))
    answer = await store.query("sync.test")
    assert answer == {
        "ok": True,
        "server": server(auth=True),
        "database": database,
        "user": AUTH_USER,
        "documents": 0,
    }, answer
    assert AUTH_PASSWORD not in repr(answer)
    assert await all_docs(ctx, database, auth=True) == {}  # nothing written
    status = await store.query("sync.status")
    assert status["lastPush"] is None and status["documents"] == 0, status


async def case_sync_test_names_a_wrong_password_and_a_missing_database(ctx: Ctx) -> None:
    store, database = await synced_store(ctx, auth=True)
    wrong = "wrong-Pässword-5e1d"
    args = {"server": server(auth=True), "database": database, "user": AUTH_USER}
    await store.command("sync.configure", {**args, "password": wrong})
    error = await raises(NetworkError, store.query("sync.test"))
    token = base64.b64encode(f"{AUTH_USER}:{wrong}".encode()).decode()
    as_json = repr(error.to_json())
    assert error.to_json().get("field") == "password", as_json
    assert "401" in str(error), str(error)
    for secret in (wrong, AUTH_PASSWORD, token):
        assert secret not in str(error) and secret not in as_json, as_json

    await store.command(
        "sync.configure", {**args, "password": AUTH_PASSWORD, "database": "nosuchdb"}
    )
    error = await raises(NetworkError, store.query("sync.test"))
    assert error.to_json().get("field") == "database", repr(error.to_json())
    assert "does not exist" in str(error), str(error)

    await store.command("sync.forget", {})
    error = await raises(NotFoundError, store.query("sync.test"))
    assert "not configured" in str(error), str(error)


async def case_sync_test_names_a_server_that_cannot_be_reached(ctx: Ctx) -> None:
    store = await ctx.store()
    assert store.sync is not None
    ctx.names.append(store.sync.state_name)
    # Port 9 on loopback (discard): nothing listens there in the tests.
    await store.command("sync.configure", {"server": "http://127.0.0.1:9", "database": "panelot"})
    error = await raises(NetworkError, store.query("sync.test"))
    assert error.to_json().get("field") is None, repr(error.to_json())
    assert "127.0.0.1:9" in str(error), str(error)


async def case_sync_forget_deletes_the_configuration_and_its_password(ctx: Ctx) -> None:
    store, database = await synced_store(ctx, auth=True)
    tid = await store.create_thread("Pushed, then forgotten")
    await store.append(tid, "user_message", text("hello"))
    pushed = await store.command("sync.push", {})
    assert pushed["pushed"] == 2, pushed
    assert store.sync is not None
    config = await store.sync._meta("config")
    ref = config["ref"]
    assert (await store.query("credential.status", {"ref": ref}))["exists"] is True

    assert await store.command("sync.forget", {}) == {"forgotten": True}
    status = await store.query("sync.status")
    assert status["configured"] is False and "server" not in status, status
    assert "user" not in status and status["documents"] == 0, status  # the state too
    assert status["lastPush"] is None and status["lastPull"] is None, status
    assert status["device"], status  # the device's id stays
    assert (await store.query("credential.status", {"ref": ref}))["exists"] is False
    await raises(NotFoundError, store.command("sync.push", {}))
    assert await store.command("sync.forget", {}) == {"forgotten": False}
    # The server keeps what it had.
    assert f"threads:{tid}" in await all_docs(ctx, database, auth=True)


async def case_a_new_database_gets_everything_though_the_old_one_had_it(ctx: Ctx) -> None:
    store, first = await synced_store(ctx)
    tid = await store.create_thread("Moved to another database")
    await store.append(tid, "user_message", text("hello"))
    assert (await store.command("sync.push", {}))["pushed"] == 2
    second = await new_database(ctx)
    await store.command("sync.configure", {"server": server(), "database": second})
    status = await store.query("sync.status")
    assert status["documents"] == 0 and status["lastPush"] is None, status
    assert (await store.command("sync.push", {}))["pushed"] == 2
    assert f"threads:{tid}" in await all_docs(ctx, second)
    # The same database configured again: the state stays.
    await store.command("sync.configure", {"server": server(), "database": second})
    assert (await store.query("sync.status"))["documents"] == 2
    assert (await store.command("sync.push", {}))["pushed"] == 0
    assert f"threads:{tid}" in await all_docs(ctx, first)
