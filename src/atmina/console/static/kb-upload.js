// Knowledge Gateway console, Knowledge Bases: uploads by drag and drop. Progressive enhancement
// of the upload form's file input (which stays usable by keyboard): the dropped or chosen files
// are hashed here (SHA-256), declared to the console (request_uploads as the signed-in person),
// PUT to the presigned URLs they get, confirmed (confirm_uploads), and the folder is reloaded.
'use strict';

// The section's stylesheet: from the gateway's own origin, as the CSP allows; every page reads without it.
document.head.append(
  Object.assign(document.createElement('link'), { rel: 'stylesheet', href: document.currentScript.src.replace(/kb-upload\.js$/, 'kbs.css') }),
);

for (const form of document.querySelectorAll('form[data-upload]')) {
  const input = form.querySelector('input[type=file]');
  const zone = form.querySelector('[data-dropzone]');
  const status = form.querySelector('[data-upload-status]');
  const button = form.querySelector('[data-upload-button]');
  const csrf = form.querySelector('input[name=csrf]').value;
  const folder = form.dataset.folder || '';
  const batchMax = Number(form.dataset.batchMax) || 10;
  const message = (key, values) =>
    (form.dataset['message' + key[0].toUpperCase() + key.slice(1)] || key).replace(/\{(\w+)\}/g, (_, name) => String(values[name] ?? ''));
  for (const note of form.querySelectorAll('[data-no-script]')) note.hidden = true;
  zone.classList.add('active');
  button.hidden = false;

  const say = (lines) => {
    status.replaceChildren(...lines.map((line) => Object.assign(document.createElement('p'), { textContent: line })));
  };

  /** The refusal a console answer holds: its JSON error, or the text of the page's message. */
  const refusalOf = async (response) => {
    const text = await response.text();
    const page = new DOMParser().parseFromString(text, 'text/html');
    const said = page.querySelector('main p');
    return said === null ? 'HTTP ' + response.status : said.textContent;
  };

  const post = async (url, fields) => {
    const body = new URLSearchParams({ csrf, ...fields });
    const response = await fetch(url, { method: 'POST', body, credentials: 'same-origin' });
    if (!response.ok) throw new Error(await refusalOf(response));
    return response.json();
  };

  const hex = (buffer) => Array.from(new Uint8Array(buffer), (byte) => byte.toString(16).padStart(2, '0')).join('');

  const uploadBatch = async (files, problems) => {
    const fields = { count: String(files.length) };
    const bytes = [];
    for (const [i, file] of files.entries()) {
      const data = await file.arrayBuffer();
      bytes.push(data);
      fields['path' + i] = folder + file.name;
      fields['size' + i] = String(file.size);
      fields['sha256' + i] = hex(await crypto.subtle.digest('SHA-256', data));
      fields['type' + i] = file.type;
    }
    const batch = await post(form.action, fields);
    for (const failure of batch.failures) problems.push(message('failed', { name: failure.path, error: failure.error }));
    for (const upload of batch.uploads) {
      say([message('sending', { name: upload.path }), ...problems]);
      const headers = { ...upload.headers };
      // The browser sets Content-Length itself; it may not be set by a script.
      delete headers['content-length'];
      const put = await fetch(upload.url, { method: upload.method, headers, body: bytes[upload.index] });
      if (!put.ok) problems.push(message('failed', { name: upload.path, error: 'HTTP ' + put.status }));
    }
    if (batch.uploads.length === 0) return 0;
    const confirmed = await post(form.dataset.confirm, { batch: batch.batch });
    let done = 0;
    for (const item of confirmed.items) {
      if (item.ok) done += 1;
      else problems.push(message('failed', { name: item.path, error: item.error }));
    }
    return done;
  };

  const upload = async (list) => {
    const files = Array.from(list);
    if (files.length === 0) return;
    const problems = [];
    let done = 0;
    say([message('hashing', { count: files.length })]);
    try {
      for (let start = 0; start < files.length; start += batchMax) done += await uploadBatch(files.slice(start, start + batchMax), problems);
    } catch (error) {
      problems.push(message('refused', { error: error.message }));
    }
    if (problems.length === 0) {
      say([message('done', { count: done })]);
      window.location.assign(form.dataset.reload);
    } else say(problems);
  };

  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void upload(input.files);
  });
  input.addEventListener('change', () => void upload(input.files));
  for (const name of ['dragenter', 'dragover']) {
    zone.addEventListener(name, (event) => {
      event.preventDefault();
      zone.classList.add('over');
    });
  }
  zone.addEventListener('dragleave', () => zone.classList.remove('over'));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    zone.classList.remove('over');
    void upload(event.dataTransfer.files);
  });
}
