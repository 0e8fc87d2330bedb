'use strict';

// greet returns a greeting for name.
function greet(name) {
  if (!name) {
    throw new Error('greet: a name is required');
  }
  return `Hello, ${name}!`;
}

// slugify turns a title into a URL slug.
// TODO: transliterate accented letters
function slugify(title) {
  return String(title)
    .toLowerCase()
    .trim()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
}

module.exports = { greet, slugify };
