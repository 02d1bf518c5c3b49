// A `.py` file imported by the extension bundle is its text (scripts/build.mjs: loader `text`).
declare module '*.py' {
  const text: string;
  export default text;
}
