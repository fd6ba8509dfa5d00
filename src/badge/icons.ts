import { LabIcon } from '@jupyterlab/ui-components';

import craneSvgstr from '../../style/icons/crane.svg';
import crashSvgstr from '../../style/icons/crash.svg';
import maybeSvgstr from '../../style/icons/maybe.svg';
import missedSvgstr from '../../style/icons/missed.svg';
import observedSvgstr from '../../style/icons/observed.svg';

// The level icons are drawn in the text colour of their state (style/base.css), so they follow
// light, dark and high-contrast themes.

/** The extension: sidebar tab, settings entry, commands. */
export const craneIcon = new LabIcon({
  name: 'crane-jupyterlab:crane',
  svgstr: craneSvgstr
});

/** Will crash (certain), and a crash that happened as warned. */
export const crashIcon = new LabIcon({
  name: 'crane-jupyterlab:crash',
  svgstr: crashSvgstr
});

/** May crash (the model's prediction). */
export const maybeIcon = new LabIcon({
  name: 'crane-jupyterlab:maybe',
  svgstr: maybeSvgstr
});

/** A crash observed in a trial run. */
export const observedIcon = new LabIcon({
  name: 'crane-jupyterlab:observed',
  svgstr: observedSvgstr
});

/** A crash nothing warned of. */
export const missedIcon = new LabIcon({
  name: 'crane-jupyterlab:missed',
  svgstr: missedSvgstr
});
