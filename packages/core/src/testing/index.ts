// Test helpers for keel and for users' own tests: a fake clock, a scripted model, contract suites.
export {};
