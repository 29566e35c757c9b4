/**
 * The core's read path (@dotasks/core/read), for the CLI's modules to import
 * relatively: Node resolves a package name again for every module that names
 * it (about 2 ms each on the path of `tasks list`), a relative path once.
 */
export * from '@dotasks/core/read';
