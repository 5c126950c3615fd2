// The status line under the sentence: errors, and notes about the latest answer.
const line = () => document.getElementById('status');

export function showError(e) {
  const status = line();
  status.textContent = `Error: ${e.message ?? e}`;
  status.classList.add('error');
}

/** A note (or '' for none) in place of an error. */
export function showNote(text) {
  const status = line();
  status.classList.remove('error');
  status.textContent = text;
}

/** A note beside whatever is there (an error stays an error). */
export function setStatusText(text) {
  line().textContent = text;
}
