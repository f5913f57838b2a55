// Knowledge Gateway console: progressive enhancement only. Every page works without this file;
// it applies a filter form as soon as one of its choices changes.
for (const form of document.querySelectorAll('form[data-autosubmit]')) {
  for (const control of form.querySelectorAll('select')) control.addEventListener('change', () => form.requestSubmit());
}
