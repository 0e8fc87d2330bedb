#!/usr/bin/env node
'use strict';

const { greet } = require('./index');

const name = process.argv[2] || 'World';
console.log(greet(name));
