// The package's worker (dist/worker-entry.js) with its postMessage watched: after each message sent
// with a transfer list, it tells the page how many buffers went and whether each was detached here
// (transferred, not copied). The page starts it with loadAttentionWorker({ workerUrl }).
import '/dist/worker-entry.js';

const post = self.postMessage.bind(self);
self.postMessage = (message, transfer) => {
  post(message, transfer);
  if (transfer?.length) post({ type: 'spy', id: -1, sent: transfer.length, detached: transfer.filter((b) => b.byteLength === 0).length, of: message.type });
};
