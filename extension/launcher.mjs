// Opens the real side panel. chrome.sidePanel.open needs a user gesture, so it is called
// synchronously from the click handler with a window id looked up beforehand.
const status = document.getElementById("status");
const { id: windowId } = await chrome.windows.getCurrent();

document.getElementById("open").addEventListener("click", () => {
  chrome.sidePanel.open({ windowId }).then(
    () => {
      status.textContent = "opened";
    },
    (error) => {
      status.textContent = `failed: ${error.message}`;
    },
  );
});
