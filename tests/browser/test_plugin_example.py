"""The example of docs/testing.md: written only against panelot.testing's fixtures."""

from panelot.testing import PageStore, StubProvider, new_thread, send_message


def test_a_message_sent_in_the_composer_is_stored(
    panelot_store: PageStore, panelot_provider: StubProvider
) -> None:
    thread_id = new_thread(panelot_store.page)
    send_message(panelot_store.page, "hello from pytest")
    node = panelot_store.wait_for_node(lambda n: n["type"] == "user_message", thread_id)
    assert node["payload"]["content"] == [{"type": "text", "text": "hello from pytest"}]
    assert panelot_provider.requests[-1]["body"]["messages"][-1]["content"] == "hello from pytest"
