import { LabIcon } from '@jupyterlab/ui-components';

import craneSvgstr from '../style/icons/crane.svg';
import crashSvgstr from '../style/icons/crash.svg';

/** The sidebar's icon. */
export const craneIcon = new LabIcon({
  name: 'crane-jupyterlab:crane',
  svgstr: craneSvgstr
});

/** A predicted crash. */
export const crashIcon = new LabIcon({
  name: 'crane-jupyterlab:crash',
  svgstr: crashSvgstr
});
