declare module 'node-gyp-build' {
  interface NodeGypBuild {
    (dir: string): unknown;
    /** Resolves the path of the addon node-gyp-build would load from `dir`. */
    resolve(dir: string): string;
  }
  const load: NodeGypBuild;
  export default load;
}
