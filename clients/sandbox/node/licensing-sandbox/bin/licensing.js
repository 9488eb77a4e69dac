#!/usr/bin/env node
import { launch } from "./launch.js";

launch("licensing");
