// SVG files are bundled as strings (webpack asset/source) for LabIcon.
declare module '*.svg' {
  const value: string;
  export default value;
}
